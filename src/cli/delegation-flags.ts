import {
  type DelegationField,
  DelegationFields,
  type DelegationRequest,
  parseDelegationRequest,
  type Spelling,
} from "../engine/lifecycle/request.js";
import type * as z from "../support/zod.js";
import { defineFlag, type Flag, type FlagKind, type Flags, readFlag } from "./flags.js";
import { readTextOrFile } from "./options.js";

/**
 * The command line's codec of the delegation request (src/engine/lifecycle/request.ts): a flag per field,
 * its kind, choices and description taken from the field, and `requestFromFlags`, which renames the flags'
 * values to the request's fields and parses them with the request's one parse.
 */

/**
 * What the command line gives for a field: every value of a list, whether a switch was given, else the
 * text as typed (choices and numbers are the parse's to check).
 */
type FlagValueOf<K extends DelegationField> = K extends DelegationField
  ? NonNullable<z.input<(typeof DelegationFields)[K]>> extends readonly unknown[]
    ? string[]
    : NonNullable<z.input<(typeof DelegationFields)[K]>> extends boolean
      ? boolean
      : string | undefined
  : never;

/** A flag that sets a field of the request. */
export interface FieldFlag<K extends DelegationField = DelegationField> extends Flag<FlagValueOf<K>> {
  readonly field: K;
}

function isFieldFlag(flag: Flag): flag is FieldFlag {
  return "field" in flag;
}

/** The kind of schema a field holds, under its `optional()`: what its flag's kind and choices come from. */
function definitionOf(field: DelegationField): { type: string; entries?: Record<string, string> } {
  let def = DelegationFields[field].def as { type: string; innerType?: z.ZodType };
  if (def.type === "optional" && def.innerType) def = def.innerType.def as typeof def;
  return def;
}

/**
 * The flag of a request field: a list for an array, a switch for a boolean, else text; the choices of an
 * enum; the field's description, then `note` (what only the command line has, like `@file`).
 */
export function fieldFlag<K extends DelegationField>(field: K, flags: string, note?: string): FieldFlag<K> {
  const def = definitionOf(field);
  const kind: FlagKind = def.type === "array" ? "list" : def.type === "boolean" ? "switch" : "text";
  const description = [DelegationFields[field].description ?? "", note ?? ""].filter(Boolean).join(" ");
  const choices = def.type === "enum" && def.entries ? Object.values(def.entries) : undefined;
  return { ...defineFlag<FlagValueOf<K>>(flags, description, kind, choices ? { choices } : {}), field };
}

// The request's flags, one definition each.
export const AGENT = fieldFlag("agent", "--agent <id>", "See `caesar agents list`.");
export const ROLE = fieldFlag("role", "--role <name>", "See `caesar role list`.");
export const MODE = fieldFlag("mode", "--mode <mode>");
export const ISOLATION = fieldFlag("isolation", "--isolation <isolation>");
export const NETWORK = fieldFlag("network", "--network <network>");
export const TIMEOUT = fieldFlag("timeout", "--timeout <duration>", "It is task.json's deadline_ms.");
export const MODEL = fieldFlag("model", "--model <model>");
export const CONTEXT = fieldFlag(
  "context",
  "--context <text|@file>",
  "Text, or @file to read it from a file.",
);
export const CONSTRAINT = fieldFlag("constraints", "--constraint <text>");
export const ACCEPT = fieldFlag("acceptance_criteria", "--accept <criterion>");
export const CHECK = fieldFlag("checks", "--check <command>");
export const CHECK_TIMEOUT = fieldFlag("check_timeout", "--check-timeout <duration>");
export const ATTEMPTS = fieldFlag("attempts", "--attempts <n>");
export const FOLLOW_UP = fieldFlag("follow_up", "--follow-up <how>");
export const CHANNEL = fieldFlag("channel", "--channel");
export const ON = fieldFlag("on", "--on <nats-url|local>");

/** How the command line names a field in a refusal: its flag (`--timeout`), or `<objective>`. */
export function flagSpelling(flags: Flags): Spelling {
  const byField = new Map<PropertyKey, string>();
  // A field set from a flag of the command's own (a race's contenders, `--agent`) is named by that flag.
  for (const flag of Object.values(flags)) byField.set(flag.key, flag.long);
  for (const flag of Object.values(flags)) if (isFieldFlag(flag)) byField.set(flag.field, flag.long);
  return (path) => {
    const [field, index] = path;
    if (field === "objective") return "<objective>";
    if (field === "extra_args") return "the agent's arguments after --";
    const name = byField.get(field ?? "") ?? String(field);
    return typeof index === "number" ? `${name} (value ${index + 1})` : name;
  };
}

/**
 * The request's fields as these flags give them, before the parse: each field flag's value under its
 * field's name (`--accept` → `acceptance_criteria`), `--context @file` read, a whole number as a number
 * (anything else is left for the parse to refuse); the agent's arguments after `--`.
 */
export async function inputFromFlags(
  flags: Flags,
  options: Readonly<Record<string, unknown>>,
  given: { objective: string; extraArgs?: readonly string[]; cwd: string },
): Promise<Record<string, unknown>> {
  const input: Record<string, unknown> = { objective: given.objective };
  for (const flag of Object.values(flags)) {
    if (!isFieldFlag(flag)) continue;
    const value = readFlag(flag, options);
    if (value === undefined || value === false || (Array.isArray(value) && value.length === 0)) continue;
    if (flag.field === "context") {
      input.context = await readTextOrFile(String(value), given.cwd, flag.long);
    } else if (
      definitionOf(flag.field).type === "number" &&
      typeof value === "string" &&
      /^\d+$/.test(value)
    ) {
      input[flag.field] = Number(value);
    } else {
      input[flag.field] = value;
    }
  }
  if (given.extraArgs && given.extraArgs.length > 0) input.extra_args = [...given.extraArgs];
  return input;
}

/** The one parse, as the command line asks: recorded as asked by `cli`, refusals naming the flags. */
export function parseFromFlags(flags: Flags, input: Record<string, unknown>): DelegationRequest {
  return parseDelegationRequest(input, { set: { requested_by: "cli" }, spell: flagSpelling(flags) });
}

/** The request these flags ask for (`inputFromFlags`, then `parseFromFlags`). */
export async function requestFromFlags(
  flags: Flags,
  options: Readonly<Record<string, unknown>>,
  given: { objective: string; extraArgs?: readonly string[]; cwd: string },
): Promise<DelegationRequest> {
  return parseFromFlags(flags, await inputFromFlags(flags, options, given));
}
