/**
 * A command's options as an allow-list, and the GNU-style parse of its arguments against it: short
 * options clustered (`-uo out`), long options abbreviated to any unique prefix (`--in` is `--in-place`,
 * `--outp=x` is `--output=x`), options after operands (GNU permutes), `--` ending the options.
 */

/** How an option takes its argument: none, in the same or the next word, or only in the same word. */
export type OptionArg = "none" | "required" | "optional";

interface LongOption {
  arg: OptionArg;
  /** Known to the program, refused by caesar: it writes, runs a program, or changes the system. */
  refused: boolean;
}

export interface OptionTable {
  /** Every long option the program knows, allowed or refused: prefixes resolve against all of them. */
  long: ReadonlyMap<string, LongOption>;
  /** Short options: the long option each stands for, or its own entry (`-1`, `-C`). */
  short: ReadonlyMap<string, { name: string; arg: OptionArg; refused: boolean }>;
  /** `-5`, `-20`: a count (head, tail, grep's context, git log). */
  numeric: boolean;
}

export interface ParsedOption {
  /** The long name (resolved from an abbreviation or a short letter), or the short letter. */
  name: string;
  value?: string;
}

export interface ParsedArgs {
  options: ParsedOption[];
  operands: string[];
}

/**
 * Build a table from two specs. `long`: space-separated names, `name=` takes an argument, `name[=]`
 * takes one only after `=`, a trailing `!` marks a refused option. `short`: `x` a flag of its own, `x:`
 * one with an argument, `x=name` the letter for a long option, `x!` / `x:!` refused.
 */
export function makeOptionTable(long: string, short = "", numeric = false): OptionTable {
  const longs = new Map<string, LongOption>();
  for (const token of words(long)) {
    const refused = token.endsWith("!");
    const bare = refused ? token.slice(0, -1) : token;
    const arg: OptionArg = bare.endsWith("[=]") ? "optional" : bare.endsWith("=") ? "required" : "none";
    longs.set(bare.replace(/\[?=\]?$/, ""), { arg, refused });
  }
  longs.set("help", longs.get("help") ?? { arg: "none", refused: false });
  longs.set("version", longs.get("version") ?? { arg: "none", refused: false });
  const shorts = new Map<string, { name: string; arg: OptionArg; refused: boolean }>();
  for (const token of words(short)) {
    const letter = token[0]!;
    const rest = token.slice(1);
    if (rest.startsWith("=")) {
      const name = rest.slice(1);
      const target = longs.get(name);
      if (!target) throw new Error(`-${letter} names --${name}, which the table lacks`);
      shorts.set(letter, { name, ...target });
    } else {
      shorts.set(letter, {
        name: letter,
        arg: rest.startsWith(":") ? "required" : "none",
        refused: rest.endsWith("!"),
      });
    }
  }
  return { long: longs, short: shorts, numeric };
}

/**
 * Parse `args` against the table; undefined when any option is unknown, ambiguous, refused, or lacks
 * its argument — the caller refuses the command.
 */
export function parseArgs(args: readonly string[], table: OptionTable): ParsedArgs | undefined {
  const parsed: ParsedArgs = { options: [], operands: [] };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") {
      parsed.operands.push(...args.slice(i + 1));
      break;
    }
    if (arg === "-" || !arg.startsWith("-")) {
      parsed.operands.push(arg);
      continue;
    }
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      const name = resolveLong(eq < 0 ? arg.slice(2) : arg.slice(2, eq), table);
      if (name === undefined) return undefined;
      const option = table.long.get(name)!;
      if (option.refused) return undefined;
      if (eq >= 0) {
        if (option.arg === "none") return undefined;
        parsed.options.push({ name, value: arg.slice(eq + 1) });
      } else if (option.arg === "required") {
        if (i + 1 >= args.length) return undefined;
        parsed.options.push({ name, value: args[++i]! });
      } else parsed.options.push({ name });
      continue;
    }
    if (table.numeric && /^-\d+$/.test(arg)) {
      parsed.options.push({ name: "count", value: arg.slice(1) });
      continue;
    }
    const consumed = parseCluster(arg, args[i + 1], table, parsed);
    if (consumed === undefined) return undefined;
    i += consumed;
  }
  return parsed;
}

/** One `-abc` word; how many of the following words it took (0 or 1), undefined when refused. */
function parseCluster(
  arg: string,
  next: string | undefined,
  table: OptionTable,
  parsed: ParsedArgs,
): number | undefined {
  for (let j = 1; j < arg.length; j++) {
    const option = table.short.get(arg[j]!);
    if (!option || option.refused) return undefined;
    if (option.arg === "none") {
      parsed.options.push({ name: option.name });
      continue;
    }
    const rest = arg.slice(j + 1);
    if (rest !== "" || option.arg === "optional") {
      parsed.options.push({ name: option.name, ...(rest === "" ? {} : { value: rest }) });
      return 0;
    }
    if (next === undefined) return undefined;
    parsed.options.push({ name: option.name, value: next });
    return 1;
  }
  return 0;
}

/** getopt_long's rule: an exact name wins, else the one option the prefix starts; none or several is no. */
export function resolveLong(prefix: string, table: OptionTable): string | undefined {
  if (prefix === "") return undefined;
  if (table.long.has(prefix)) return prefix;
  const matches = [...table.long.keys()].filter((name) => name.startsWith(prefix));
  return matches.length === 1 ? matches[0] : undefined;
}

function words(spec: string): string[] {
  return spec.split(/\s+/).filter(Boolean);
}
