import { isReadOnlyFind } from "./read-only/find.js";
import { isReadOnlyGit } from "./read-only/git.js";
import { parseArgs } from "./read-only/options.js";
import { ANY_ARGUMENTS, READERS, type ReaderSpec } from "./read-only/readers.js";
import { SED } from "./read-only/sed.js";
import { splitOutsideQuotes, splitWords, unwrap } from "./read-only/shell-words.js";

/**
 * Whether a shell command only reads, decided by what is allowed: each program of the command must be in
 * the allow-list, and each of its options among those the list allows for it — abbreviations resolved as
 * the program resolves them (`sed --in` is `--in-place`), short options unclustered (`sort -uo out`).
 * Used to answer an ACP agent's permission request in a read-only task: anything not provably read-only
 * is refused (fail closed) — redirections, substitutions, unknown programs, unknown options.
 */

const SPECS: Readonly<Record<string, ReaderSpec>> = {
  ...READERS,
  egrep: READERS.grep!,
  fgrep: READERS.grep!,
  sed: SED,
};

/** Shell syntax that writes, substitutes or runs in the background. */
const UNSAFE_SYNTAX = /[<>`&]|\$\(|\$\{|\n/;

export function isReadOnlyCommand(command: string): boolean {
  const text = unwrap(command.trim());
  if (text === "") return false;
  // `&&`, `||` and `;` chain commands; `|` pipes them. Each part must be read-only on its own.
  const withoutChains = text.replace(/&&|\|\|/g, ";");
  if (UNSAFE_SYNTAX.test(withoutChains)) return false;
  const parts = splitOutsideQuotes(withoutChains, /[;|]/);
  if (!parts) return false;
  return parts.every((part) => isReadOnlySimple(part.trim()));
}

function isReadOnlySimple(part: string): boolean {
  const words = splitWords(part);
  if (!words || words.length === 0) return false;
  const [program, ...args] = words;
  const name = program!.split("/").pop()!;
  if (ANY_ARGUMENTS.has(name)) return true;
  if (name === "find") return isReadOnlyFind(args);
  if (name === "git") return isReadOnlyGit(args);
  const spec = SPECS[name];
  if (!spec) return false;
  const parsed = parseArgs(args, spec.options);
  return parsed !== undefined && (spec.check?.(parsed) ?? true);
}

/** The option tables of the programs allowed, by name (git's and find's apart), for tests. */
export const READ_ONLY_PROGRAMS = SPECS;
