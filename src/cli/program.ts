import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { EXIT_USAGE, type UsageCode, UsageError } from "../support/errors.js";
import { PACKAGE_JSON } from "../support/package-paths.js";
import { trace } from "../support/trace.js";
import { type CommandDefinition, HELP_GROUPS } from "./command.js";
import { endQuietlyOnClosedPipe, reportError } from "./output.js";

const EXIT_CODES_HELP = `
Exit codes:
  0  ok
  1  failure (the task failed, a file is invalid, a request was refused)
  2  usage or configuration error

Every command accepts --root <dir> and --json. Run \`caesar <command> --help\` for its options.`;

function packageVersion(): string {
  const raw = readFileSync(PACKAGE_JSON, "utf8");
  return (JSON.parse(raw) as { version: string }).version;
}

/** Is --json on the command line (before a `--`)? Known before parsing, for usage errors. */
function wantsJson(argv: string[]): boolean {
  const end = argv.indexOf("--");
  return (end === -1 ? argv : argv.slice(0, end)).includes("--json");
}

/** The `caesar` program with these commands (registry.ts lists them). */
export function makeProgram(json: boolean, commands: readonly CommandDefinition[]): Command {
  const program = new Command("caesar")
    .description(
      "Delegate a coding task to any coding agent: isolated in a git worktree, streamed live, verified against git.",
    )
    .version(packageVersion(), "-V, --version")
    .helpCommand("help [command]", "show help for a command")
    .showSuggestionAfterError(true)
    .addHelpText("after", EXIT_CODES_HELP)
    .exitOverride()
    .configureOutput({
      outputError: (text, write) => {
        if (!json) write(text);
      },
    });
  for (const group of Object.keys(HELP_GROUPS) as (keyof typeof HELP_GROUPS)[]) {
    for (const definition of commands.filter((c) => c.group === group)) {
      const command = definition.define(program);
      command.helpGroup(HELP_GROUPS[group]);
      applyExitOverride(command, json);
    }
  }
  return program;
}

function applyExitOverride(command: Command, json: boolean): void {
  command.exitOverride().configureOutput({
    outputError: (text, write) => {
      if (!json) write(text);
    },
  });
  for (const sub of command.commands) applyExitOverride(sub, json);
}

/** The catalogue's code for each error commander reports (its own name, in snake case). */
const COMMANDER_CODES: Readonly<Record<string, UsageCode>> = {
  "commander.conflictingOption": "conflicting_option",
  "commander.excessArguments": "excess_arguments",
  "commander.invalidArgument": "invalid_argument",
  "commander.missingArgument": "missing_argument",
  "commander.missingMandatoryOptionValue": "missing_mandatory_option_value",
  "commander.optionMissingArgument": "option_missing_argument",
  "commander.unknownCommand": "unknown_command",
  "commander.unknownOption": "unknown_option",
};

export async function main(argv: string[], commands: readonly CommandDefinition[]): Promise<number> {
  trace("main: start");
  endQuietlyOnClosedPipe();
  const json = wantsJson(argv.slice(2));
  const program = makeProgram(json, commands);
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.exitCode === 0) return 0; // --help, --version
      if (json) {
        const message = error.message.replace(/^error: /, "");
        return reportError(
          new UsageError(COMMANDER_CODES[error.code] ?? "usage_error", message, {
            detail: "Run `caesar --help` or `caesar <command> --help` for usage.",
          }),
          true,
        );
      }
      return EXIT_USAGE;
    }
    return reportError(error, json);
  }
}
