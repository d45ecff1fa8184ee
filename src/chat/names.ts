import { UsageError } from "../support/errors.js";

/** What a name is used for, for the error message. */
export type NameKind = "agent" | "channel" | "task marker";

/**
 * Names that become file or folder names (agents, channels, task markers): lower-case ASCII letters
 * and digits, then also `.`, `_` or `-`, at most 64 characters. Lower case only, so that two names
 * never collide on a case-insensitive file system (macOS, Windows).
 */
const NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;
// Device names Windows refuses as file names, whatever the extension.
const WINDOWS_RESERVED = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$/;
/** Values of `to` that mean "everyone in the channel". */
export const BROADCAST_NAMES = new Set(["all", "*"]);

/** The problem with `raw` as a name, or undefined when it is fine. */
export function explainBadName(raw: string, kind: NameKind): string | undefined {
  if (raw === "") return `the ${kind} name is empty`;
  if (raw.length > 64) return `the ${kind} name is longer than 64 characters`;
  if (raw !== raw.toLowerCase() && NAME_PATTERN.test(raw.toLowerCase()))
    return `the ${kind} name ${JSON.stringify(raw)} has upper-case letters (names are lower-case: ${raw.toLowerCase()})`;
  if (!NAME_PATTERN.test(raw))
    return `the ${kind} name ${JSON.stringify(raw)} may only hold a-z, 0-9, '.', '_' and '-', and must start with a letter or digit`;
  if (raw.includes("..")) return `the ${kind} name ${JSON.stringify(raw)} contains ".."`;
  if (raw.endsWith(".")) return `the ${kind} name ${JSON.stringify(raw)} ends with "."`;
  if (WINDOWS_RESERVED.test(raw)) return `${JSON.stringify(raw)} is a reserved device name on Windows`;
  if (kind === "agent" && BROADCAST_NAMES.has(raw)) return `"${raw}" means everyone and cannot name an agent`;
  return undefined;
}

/** `raw` when it is a valid name of that kind; otherwise a usage error saying what is allowed. */
export function validateName(raw: string, kind: NameKind): string {
  const problem = explainBadName(raw, kind);
  if (problem === undefined) return raw;
  throw new UsageError("invalid_name", `Invalid ${kind} name: ${problem}.`, {
    detail:
      "Names that become file names are 1-64 characters of a-z, 0-9, '.', '_' and '-', starting with a letter or digit.",
  });
}

export function isValidName(raw: string, kind: NameKind): boolean {
  return explainBadName(raw, kind) === undefined;
}

const SLUG_MAX = 40;

/**
 * The `<slug>` of a message file name, from its title: lower-case ASCII words joined by `-`,
 * accents dropped, at most 40 characters (cut at a word boundary when one is near), `message` when
 * nothing is left.
 */
export function slugify(title: string): string {
  const ascii = title.normalize("NFKD").replace(/[\u0300-\u036f]/g, "");
  let slug = ascii
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  if (slug.length > SLUG_MAX) {
    const cut = slug.slice(0, SLUG_MAX);
    const boundary = cut.lastIndexOf("-");
    slug = boundary >= SLUG_MAX / 2 ? cut.slice(0, boundary) : cut.replace(/-+$/, "");
  }
  return slug || "message";
}
