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
 * A secret given to a flag (`--token`): `@file` or `env:NAME`, never the secret itself, which any account
 * on the machine reads on the command line (`ps`, /proc/<pid>/cmdline).
 */
export async function readSecretOption(
  value: string | undefined,
  cwd: string,
  flag: string,
): Promise<string | undefined> {
  if (value === undefined) return undefined;
  if (value.startsWith("@")) return readTextOrFile(value, cwd, flag);
  if (value.startsWith("env:")) {
    const name = value.slice("env:".length);
    const secret = process.env[name];
    if (secret === undefined || secret.trim() === "") {
      throw new UsageError("invalid_option", `${flag} ${value}: the environment has no ${name}.`, {
        detail: `Export it first (export ${name}=…), or pass ${flag} @file.`,
      });
    }
    return secret;
  }
  throw new UsageError("token_on_command_line", `${flag} takes @file or env:NAME, not the token itself.`, {
    detail: `A command line is visible to every account on this machine (ps): put the token in a file only you can read (chmod 600) and pass ${flag} @that-file, or export it and pass ${flag} env:NAME. A token already typed on a command line may have been read: replace it.`,
  });
}

/**
 * What the user wrote after a standalone `--` on this command line: passed verbatim to the agent.
 * Operands before it that the command does not expect are refused, never silently forwarded.
 */
export function argsAfterDoubleDash(argv: readonly string[]): string[] {
  const index = argv.indexOf("--");
  return index === -1 ? [] : argv.slice(index + 1);
}
