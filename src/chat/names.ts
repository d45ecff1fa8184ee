import { UsageError } from "../support/errors.js";

/** What a name is used for, for the error message. */
export type NameKind = "agent" | "channel";

/**
 * Names follow the reference implementation (`chat.py`), so that whatever one tool accepts the other
 * reads: case is kept (`Review`, `Alice`), and only what could leave a folder or not survive a
 * frontmatter line is refused.
 *
 * - A channel is a folder: no `/`, `\` or `:`, not `.` or `..`, not starting with `.` or `_` (those
 *   are the channel's own files), no control characters.
 * - An agent is a frontmatter value and, through its slug, part of file names: no control
 *   characters (a newline would forge a field), no `,` (it separates recipients), no ` #` (it starts
 *   a comment), no surrounding spaces, quotes or brackets (readers strip them), not `all` or `*`
 *   (they mean everyone).
 */
const MAX_LENGTH = 200;
// C0 controls and DEL: a newline forges a frontmatter field, a NUL makes the file binary.
const CONTROL = /[\u0000-\u001f\u007f]/;
/** Values of `to` that mean "everyone in the channel" (besides an empty one and `[]`). */
export const BROADCAST_NAMES = new Set(["all", "*"]);

/** The problem with `raw` as a name, or undefined when it is fine. */
export function explainBadName(raw: string, kind: NameKind): string | undefined {
  const quoted = JSON.stringify(raw);
  if (raw.trim() === "") return `the ${kind} name is empty`;
  if (raw.length > MAX_LENGTH) return `the ${kind} name is longer than ${MAX_LENGTH} characters`;
  if (CONTROL.test(raw)) return `the ${kind} name ${quoted} contains a control character`;
  if (raw !== raw.trim()) return `the ${kind} name ${quoted} starts or ends with a space`;
  return kind === "channel" ? explainBadChannel(raw, quoted) : explainBadAgent(raw, quoted);
}

function explainBadChannel(raw: string, quoted: string): string | undefined {
  if (/[/\\:]/.test(raw)) return `the channel name ${quoted} contains '/', '\\' or ':'`;
  if (raw === "." || raw === "..") return `the channel name ${quoted} is not a folder name`;
  if (raw.startsWith(".") || raw.startsWith("_"))
    return `the channel name ${quoted} starts with '.' or '_' (reserved for the channel's own files)`;
  return undefined;
}

function explainBadAgent(raw: string, quoted: string): string | undefined {
  if (BROADCAST_NAMES.has(raw)) return `${quoted} means everyone and cannot name an agent`;
  if (raw.includes(",")) return `the agent name ${quoted} contains ',' (it separates recipients)`;
  if (/\s#/.test(raw)) return `the agent name ${quoted} contains ' #' (it starts a comment)`;
  if (/^["'[]|["'\]]$/.test(raw))
    return `the agent name ${quoted} starts or ends with a quote or a bracket (readers strip them)`;
  return undefined;
}

/** `raw` when it is a valid name of that kind; otherwise a usage error saying what is allowed. */
export function validateName(raw: string, kind: NameKind): string {
  const problem = explainBadName(raw, kind);
  if (problem === undefined) return raw;
  throw new UsageError("invalid_name", `Invalid ${kind} name: ${problem}.`, {
    detail:
      kind === "channel"
        ? "A channel is a folder: any name without '/', '\\', ':' or control characters, not starting with '.' or '_'."
        : "An agent name is any one-line text without ',' or ' #', not 'all' or '*', without surrounding spaces, quotes or brackets.",
  });
}

export function isValidName(raw: string, kind: NameKind): boolean {
  return explainBadName(raw, kind) === undefined;
}

const SLUG_MAX = 40;

/**
 * The reference implementation's slug, used wherever a name or a title becomes part of a file name
 * (`NNNN-<from>-<title>.md`, `.cursors/<agent>.txt`, `task-<id>.CLAIMED-<agent>.md`): lower case, every
 * run of characters other than `a-z 0-9` turned into `-`, at most 40 characters, `msg` when nothing is
 * left. Both tools must compute the same slug, or an agent's cursor splits in two.
 */
export function slugify(text: string): string {
  const slug = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return slug.slice(0, SLUG_MAX).replace(/-+$/, "") || "msg";
}
