import { type Command, Option } from "commander";

/**
 * Flags as definitions. Each flag is one definition — its short and long name and the hint for its value
 * (commander's flag string: `-a, --agent <id>`), its kind, its description, the values it takes and its
 * default — and a command lists the definitions it takes (`withFlags`), then reads their values typed
 * (`readFlags`): no `ctx.options.x as T` at the point of use.
 *
 * A flag's choices are shown in help but not checked by commander: the parse that reads the value checks
 * it (for the delegation flags, the request's own parse), so a bad value is refused the same way whatever
 * the surface it came through.
 */

/** What a flag holds: text (or its default), every value of a repeated flag, or whether it was given. */
export type FlagKind = "text" | "list" | "switch";

export interface Flag<V = unknown> {
  /** Commander's flag string: short name, long name, hint (`-a, --agent <id>`). */
  readonly flags: string;
  readonly description: string;
  readonly kind: FlagKind;
  /** The values it takes, listed in help (checked by whatever parses the value). */
  readonly choices?: readonly string[];
  /** Its value when it is not given (shown in help). */
  readonly fallback?: V;
  /** Where commander keeps its value (`checkTimeout` for `--check-timeout`). */
  readonly key: string;
  /** The long name, as a person types it (`--check-timeout`): how refusals name the flag. */
  readonly long: string;
  /** Type only: what `readFlags` gives for it. */
  readonly value?: V;
}

export type Flags = Readonly<Record<string, Flag>>;
export type FlagValues<F extends Flags> = { [K in keyof F]: F[K] extends Flag<infer V> ? V : never };

/** A flag's definition; a repeatable one says so in its description. */
export function defineFlag<V>(
  flags: string,
  description: string,
  kind: FlagKind,
  more: { choices?: readonly string[]; fallback?: V } = {},
): Flag<V> {
  const option = new Option(flags);
  return {
    flags,
    description: kind === "list" ? `${description} (repeatable)` : description,
    kind,
    ...(more.choices ? { choices: more.choices } : {}),
    ...(more.fallback !== undefined ? { fallback: more.fallback } : {}),
    key: option.attributeName(),
    long: option.long ?? flags,
  };
}

/** A flag that takes a value: `--model <model>`. Absent, it is `fallback` (or undefined). */
export function textFlag(
  flags: string,
  description: string,
  more?: { choices?: readonly string[] },
): Flag<string | undefined>;
export function textFlag(
  flags: string,
  description: string,
  more: { choices?: readonly string[]; fallback: string },
): Flag<string>;
export function textFlag(
  flags: string,
  description: string,
  more: { choices?: readonly string[]; fallback?: string } = {},
): Flag<string | undefined> {
  return defineFlag(flags, description, "text", more);
}

/** A flag given any number of times: `--check <command>`, each value in order. */
export function listFlag(
  flags: string,
  description: string,
  more: { choices?: readonly string[] } = {},
): Flag<string[]> {
  return defineFlag(flags, description, "list", more);
}

/** A flag without a value: `--detach`. */
export function switchFlag(flags: string, description: string): Flag<boolean> {
  return defineFlag(flags, description, "switch");
}

/** Add these flags to a command, in the order listed. */
export function withFlags(command: Command, flags: Flags): Command {
  for (const flag of Object.values(flags)) {
    const option = new Option(flag.flags, flag.description);
    // Listed in help; checked by the parse that reads the value, not by commander.
    if (flag.choices) option.argChoices = [...flag.choices];
    if (flag.kind === "list") option.argParser(collect);
    if (flag.fallback !== undefined) option.default(flag.fallback);
    command.addOption(option);
  }
  return command;
}

/** The values of these flags as commander parsed them, typed by their definitions. */
export function readFlags<F extends Flags>(
  flags: F,
  options: Readonly<Record<string, unknown>>,
): FlagValues<F> {
  const values: Record<string, unknown> = {};
  for (const [name, flag] of Object.entries(flags)) values[name] = readFlag(flag, options);
  return values as FlagValues<F>;
}

/** One flag's value (see `readFlags`). */
export function readFlag<V>(flag: Flag<V>, options: Readonly<Record<string, unknown>>): V {
  const raw = options[flag.key];
  switch (flag.kind) {
    case "switch":
      return (raw === true) as V;
    case "list":
      return (Array.isArray(raw) ? raw.map(String) : []) as V;
    case "text":
      return (typeof raw === "string" ? raw : flag.fallback) as V;
  }
}

/** Commander collector for repeatable options. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}
