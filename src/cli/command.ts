import type { Command } from "commander";
import { findProjectRoot } from "../config/project-root.js";
import { UsageError } from "../support/errors.js";
import { Output } from "./output.js";

/** The help groups commands are listed under, in the order `caesar --help` shows them. */
export const HELP_GROUPS = {
  start: "Getting started:",
  delegate: "Delegating:",
  follow: "Following:",
  configure: "Configuring:",
  integrate: "Integrating:",
} as const;

export type HelpGroup = keyof typeof HELP_GROUPS;

/** One top-level command: its definition registers name, options and handler on the program. */
export interface CommandDefinition {
  name: string;
  group: HelpGroup;
  define(program: Command): Command;
}

export interface CommandContext {
  out: Output;
  /** The project root (from --root, else the nearest .caesar/ or .git). */
  readonly root: string;
  cwd: string;
  json: boolean;
  options: Record<string, unknown>;
  command: Command;
}

/** Add the options every command accepts. */
export function withCommonOptions(command: Command): Command {
  return command
    .option("--root <dir>", "project root (default: the nearest directory holding .caesar/ or .git)")
    .option("--json", "machine output only on stdout (errors as {error:{code,summary,detail}})");
}

type Handler = (
  ctx: CommandContext,
  ...positionals: unknown[]
) => Promise<number | undefined> | Promise<void>;

/**
 * Wrap a handler for commander: build the context, run it, and leave the exit code on the process.
 * Errors propagate to the CLI's top level, which owns their rendering and exit codes.
 */
export function handle(handler: Handler) {
  return async (...raw: unknown[]): Promise<void> => {
    const command = raw[raw.length - 1] as Command;
    const positionals = raw.slice(0, -2);
    const options = command.optsWithGlobals() as Record<string, unknown>;
    const json = options.json === true;
    const cwd = currentDirectory();
    let root: string | undefined;
    const ctx: CommandContext = {
      out: new Output(json),
      get root() {
        root ??= findProjectRoot(cwd, options.root as string | undefined);
        return root;
      },
      cwd,
      json,
      options,
      command,
    };
    const code = await handler(ctx, ...positionals);
    if (typeof code === "number") process.exitCode = code;
  };
}

/** The working directory, or a clear error when it was removed from under the shell. */
function currentDirectory(): string {
  try {
    return process.cwd();
  } catch (error) {
    throw new UsageError("cwd_missing", "The current directory no longer exists.", {
      detail: "cd into a project (or an existing directory) and run the command again.",
      cause: error,
    });
  }
}
