import { DURATION_PATTERN, durationMs, formatDuration } from "./duration.js";
import * as z from "./zod.js";

/**
 * Every string a request may carry is built here, so that one rule covers them all: no control character
 * where none can be meant. A NUL in an objective, an agent id or a path would be accepted by JSON and by
 * zod's plain `string()`, then break (or be cut short) where it reaches a file, an argv or a terminal.
 * The rule is a pattern, so the JSON Schemas the server publishes say exactly what it accepts.
 *
 * - free text (objectives, answers, context): tab, line feed and carriage return are meant; no other C0
 *   control, no DEL, no C1 control;
 * - names (ids, agents, roles, models, query parameters): one line, no control character at all.
 */
const TEXT_PATTERN = /^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$/;
const NAME_PATTERN = /^[^\u0000-\u001F\u007F-\u009F]*$/;
const ANY_CONTROL = /[\u0000-\u001F\u007F-\u009F]/;

/** Say which character and where, so the caller can find it (the field is named by the issue's path). */
function describeControl(input: unknown, allowed: string): string {
  const text = typeof input === "string" ? input : "";
  const at = [...text].findIndex((char) => ANY_CONTROL.test(char) && !allowed.includes(char));
  const code = at === -1 ? 0 : [...text][at]!.codePointAt(0)!;
  const name = `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
  return `contains the control character ${name} at character ${at + 1}; ${
    allowed
      ? "only tab, line feed and carriage return are allowed in text"
      : "a name is one line of printable text"
  }`;
}

function tooLong(input: unknown, max: number): string {
  const length = typeof input === "string" ? input.length : 0;
  return `is ${length} characters long; at most ${max} are allowed`;
}

/**
 * Free text of at most `max` characters: several lines, tabs, nothing else invisible. `longer` says where
 * longer text belongs, when somewhere does.
 */
export function requestText(max: number, longer?: string) {
  return z
    .string()
    .max(max, { error: (issue) => `${tooLong(issue.input, max)}${longer ? `: ${longer}` : ""}` })
    .regex(TEXT_PATTERN, { error: (issue) => describeControl(issue.input, "\t\n\r") });
}

/** A name or an id: 1 to `max` characters of one printable line. */
export function requestName(max: number) {
  return z
    .string()
    .min(1, { error: "must not be empty" })
    .max(max, { error: (issue) => tooLong(issue.input, max) })
    .regex(NAME_PATTERN, { error: (issue) => describeControl(issue.input, "") });
}

/** A URL query parameter's name or value (may be empty): one printable line. */
export const RequestParameter = z
  .string()
  .max(4096)
  .regex(NAME_PATTERN, { error: (issue) => describeControl(issue.input, "") });

/**
 * A duration, as every surface writes one: a string with units (`90s`, `20m`, `1h30m`; see
 * DURATION_PATTERN), at most `maxMs`; parsed into milliseconds. The pattern is published, so the JSON
 * Schemas say exactly what is accepted.
 */
export function requestDuration(maxMs: number) {
  const most = maxMs % 86_400_000 === 0 ? `${maxMs / 86_400_000}d` : formatDuration(maxMs);
  const shown = (input: unknown) => JSON.stringify(String(input).slice(0, 40));
  return z
    .string({ error: "expected a duration with a unit, as a string: 90s, 20m, 1h30m" })
    .regex(DURATION_PATTERN, {
      error: (issue) =>
        `${shown(issue.input)} is not a duration: write a number and its unit (ms, s, m, h, d), e.g. 90s, 20m, 1h30m`,
    })
    .transform((text) => durationMs(text)!)
    .pipe(
      z
        .number()
        .positive({ error: "a duration must be longer than 0" })
        .max(maxMs, { error: `a duration may be at most ${most}` }),
    );
}
