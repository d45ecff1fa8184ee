/**
 * Whether a shell command only reads, as far as a short allow-list can tell. Used to answer an ACP
 * agent's permission request in a read-only task: anything not provably read-only is refused (fail
 * closed) — redirections, substitutions, unknown programs, writing options of known ones.
 */

/** Programs that never write files by themselves (their writing options are checked below). */
const READERS = new Set([
  "ls",
  "cat",
  "head",
  "tail",
  "wc",
  "grep",
  "egrep",
  "fgrep",
  "rg",
  "find",
  "pwd",
  "echo",
  "printf",
  "stat",
  "file",
  "tree",
  "du",
  "df",
  "which",
  "sed",
  "sort",
  "uniq",
  "cut",
  "tr",
  "diff",
  "cmp",
  "basename",
  "dirname",
  "realpath",
  "readlink",
  "true",
  "date",
  "nl",
  "git",
  "jq",
]);

/** git subcommands that only read the repository. */
const GIT_READERS = new Set([
  "status",
  "log",
  "diff",
  "show",
  "rev-parse",
  "ls-files",
  "ls-tree",
  "blame",
  "grep",
  "describe",
  "cat-file",
  "shortlog",
  "merge-base",
]);

/** Options that make a reader write or run something. */
const WRITING_OPTIONS: Record<string, RegExp> = {
  find: /^-(delete|exec|execdir|ok|okdir|fprint|fprint0|fprintf|fls)$/,
  sed: /^(-i|--in-place)/,
  sort: /^(-o|--output)/,
  git: /^(--output|-o)/,
  tree: /^-o$/,
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
  if (!READERS.has(name)) return false;
  const writing = WRITING_OPTIONS[name];
  if (writing && args.some((arg) => writing.test(arg))) return false;
  if (name === "git") {
    const sub = args.find((arg) => !arg.startsWith("-"));
    if (!sub || !GIT_READERS.has(sub)) return false;
  }
  return true;
}

/** `bash -lc '…'` and `sh -c "…"` run their argument: judge that. */
function unwrap(command: string): string {
  const match = /^(?:\S*\/)?(?:ba|z)?sh\s+-l?c\s+(['"])([\s\S]*)\1$/.exec(command);
  return match ? match[2]! : command;
}

/** Split on a separator outside quotes; undefined when quotes do not close. */
function splitOutsideQuotes(text: string, separator: RegExp): string[] | undefined {
  const parts: string[] = [];
  let current = "";
  let quote: string | undefined;
  for (const char of text) {
    if (quote) {
      if (char === quote) quote = undefined;
      current += char;
    } else if (char === "'" || char === '"') {
      quote = char;
      current += char;
    } else if (separator.test(char)) {
      parts.push(current);
      current = "";
    } else current += char;
  }
  if (quote) return undefined;
  parts.push(current);
  return parts;
}

function splitWords(text: string): string[] | undefined {
  const words: string[] = [];
  let current = "";
  let quote: string | undefined;
  let started = false;
  for (const char of text) {
    if (quote) {
      if (char === quote) quote = undefined;
      else current += char;
    } else if (char === "'" || char === '"') {
      quote = char;
      started = true;
    } else if (/\s/.test(char)) {
      if (started) words.push(current);
      current = "";
      started = false;
    } else {
      current += char;
      started = true;
    }
  }
  if (quote) return undefined;
  if (started) words.push(current);
  return words;
}
