import { parseJsonLine } from "../protocol/jsonl.js";

/**
 * Defensive access to an agent's JSON output: every line is untrusted input, any member may be missing
 * or of another type. Nothing here throws.
 */
export type JsonRecord = Record<string, unknown>;

/** One stdout line as a JSON object, or undefined (blank, not JSON, an array, a scalar). */
export function parseObjectLine(line: string): JsonRecord | undefined {
  const value = parseJsonLine(line);
  return value && typeof value === "object" && !Array.isArray(value) ? (value as JsonRecord) : undefined;
}

export function rec(value: unknown): JsonRecord {
  return value && typeof value === "object" && !Array.isArray(value) ? (value as JsonRecord) : {};
}

export function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

export function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** An integer exit code, or undefined. */
export function int(value: unknown): number | undefined {
  return Number.isInteger(value) ? (value as number) : undefined;
}
