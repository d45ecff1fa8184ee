import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { UsageError } from "../support/errors.js";

/** `--context` takes text, or `@file` to read it from a file. */
export async function readTextOrFile(
  value: string | undefined,
  cwd: string,
  flag: string,
): Promise<string | undefined> {
  if (value === undefined) return undefined;
  if (!value.startsWith("@")) return value;
  const path = resolve(cwd, value.slice(1));
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    throw new UsageError("unreadable_file", `${flag} ${value}: cannot read ${path}.`, {
      detail: `${(error as Error).message}. Pass the text itself, or @ followed by a readable file.`,
    });
  }
}

/**
 * What the user wrote after a standalone `--` on this command line: passed verbatim to the agent.
 * Operands before it that the command does not expect are refused, never silently forwarded.
 */
export function argsAfterDoubleDash(argv: readonly string[]): string[] {
  const index = argv.indexOf("--");
  return index === -1 ? [] : argv.slice(index + 1);
}
