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

/**
 * Options that make a reader write, run something, or change the system. Short options may be clustered
 * (`sort -uo out`, `sed -ni`): a cluster holding one of them is refused too.
 */
const WRITING_OPTIONS: Record<string, RegExp> = {
  find: /^-(delete|exec|execdir|ok|okdir|fprint|fprint0|fprintf|fls)$/,
  // -f: a script caesar cannot read; the script's own commands are checked below.
  sed: /^(-[^-]*[if]|--in-place|--file)/,
  // --compress-program runs a program of the caller's choosing.
  sort: /^(-[^-]*o|--output|--compress-program)/,
  // -O / --open-files-in-pager run a command; --config-env and --exec-path change what git runs
  // (`git -c k=v log` is refused already: `k=v` is no read-only subcommand).
  git: /^(--output|-O|--open-files-in-pager|--config-env|--exec-path|--ext-diff)/,
  tree: /^-o$/,
  // --pre runs a preprocessor program on every file searched.
  rg: /^--pre/,
  // -C / --compile writes a compiled magic file.
  file: /^(-[^-]*C|--compile)/,
  // -s / --set sets the system clock (-I takes its format in the same word: -Iseconds).
  date: /^(-[a-zA-HJ-Z]*s|--set)/,
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
  // `uniq input output` writes its second operand.
  if (name === "uniq" && args.filter((arg) => !arg.startsWith("-")).length > 1) return false;
  if (name === "sed" && !sedScriptsRead(args)) return false;
  return true;
}

/**
 * sed's scripts (each `-e`, or the first operand) may print, delete and substitute, but never write
 * (`w`, `W`, the `w` flag), execute (`e`, the `e` flag) or read other files (`r`, `R`): once the
 * `/regex/` addresses and the `s/…/…/flags` bodies are taken out, none of those letters may remain.
 */
function sedScriptsRead(args: string[]): boolean {
  const scripts: string[] = [];
  let operand = true;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "-e" || arg === "--expression") {
      scripts.push(args[++i] ?? "");
      operand = false;
    } else if (arg.startsWith("--expression=")) {
      scripts.push(arg.slice("--expression=".length));
      operand = false;
    } else if (/^-[^-]*e./.test(arg)) {
      // -ne'script', -e'script': the script is the rest of the cluster.
      scripts.push(arg.slice(arg.indexOf("e") + 1));
      operand = false;
    } else if (!arg.startsWith("-") && operand) {
      scripts.push(arg);
      operand = false;
    }
  }
  return scripts.every((script) => {
    const bare = script
      .replace(/s\/(?:[^/\\\n]|\\.)*\/(?:[^/\\\n]|\\.)*\/[gpiImM0-9]*/g, "s")
      .replace(/\/(?:[^/\\\n]|\\.)*\//g, "");
    return !/[wWeErR]/.test(bare);
  });
}

/**
 * `bash -lc '…'` and `sh -c "…"` run their argument: judge that — only when it is one quoted word (no
 * quote of its kind inside, no escape), else `bash -c 'ls '; touch ' x'` would be judged as `ls`.
 */
function unwrap(command: string): string {
  const match = /^(?:\S*\/)?(?:ba|z)?sh\s+-l?c\s+(['"])([\s\S]*)\1$/.exec(command);
  if (!match) return command;
  const inner = match[2]!;
  return inner.includes(match[1]!) || inner.includes("\\") ? command : inner;
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
    } else if (char === "\\") {
      // Outside quotes a backslash escapes the next character (a quote, a separator): the shell would
      // not split where this parser does. Refused rather than reproduced.
      return undefined;
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
