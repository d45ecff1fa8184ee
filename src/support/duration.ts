import { UsageError } from "./errors.js";

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/gy;

/**
 * What a duration looks like, everywhere one is given (flags, tool and HTTP arguments, configuration files):
 * one or more numbers, each with its unit — `1500ms`, `90s`, `20m`, `1h30m`, `2d`. A bare number is not
 * one: the unit matters. (Published as the JSON Schemas' `pattern`.)
 */
export const DURATION_PATTERN = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+$/;

/** The milliseconds `text` stands for (whole, rounded), or undefined when it is not a duration. */
export function durationMs(text: string): number | undefined {
  PART.lastIndex = 0;
  let total = 0;
  let consumed = 0;
  let match: RegExpExecArray | null = PART.exec(text);
  while (match !== null) {
    total += Number(match[1]) * UNITS[match[2]!]!;
    consumed = PART.lastIndex;
    match = PART.exec(text);
  }
  return text === "" || consumed !== text.length ? undefined : Math.round(total);
}

/** Parse `90s`, `10m`, `1h30m`, `1500ms` into milliseconds. A bare number is refused: the unit matters. */
export function parseDuration(raw: string, what = "duration"): number {
  const ms = durationMs(raw.trim());
  if (ms === undefined || ms <= 0) {
    throw new UsageError("invalid_duration", `Invalid ${what} ${JSON.stringify(raw)}.`, {
      detail: "Write a positive duration with a unit: 1500ms, 90s, 10m, 1h30m, 2d.",
    });
  }
  return ms;
}

export function formatDuration(ms: number): string {
  if (ms < 999.5) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 9950) return `${(ms / 1000).toFixed(1)}s`;
  // Round once, to whole seconds, before splitting: 3599.6 s is 1h00m, never 59m60s.
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, "0")}s`;
  const hours = Math.floor(minutes / 60);
  return `${hours}h${String(minutes % 60).padStart(2, "0")}m`;
}
