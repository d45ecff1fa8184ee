import type { Command } from "commander";
import { UsageError } from "../../support/errors.js";
import { trace } from "../../support/trace.js";
import { type CommandDefinition, handle, withCommonOptions } from "../command.js";
import {
  ACCEPT,
  AGENT,
  ATTEMPTS,
  CHANNEL,
  CHECK,
  CHECK_TIMEOUT,
  CONSTRAINT,
  CONTEXT,
  FOLLOW_UP,
  ISOLATION,
  MODE,
  MODEL,
  NETWORK,
  ON,
  ROLE,
  requestFromFlags,
  TIMEOUT,
} from "../delegation-flags.js";
import { readFlags, switchFlag, withFlags } from "../flags.js";
import { argsAfterDoubleDash } from "../options.js";

/** `caesar run`'s flags: the request's, then its own. */
export const RUN_FLAGS = {
  agent: AGENT,
  role: ROLE,
  mode: MODE,
  isolation: ISOLATION,
  network: NETWORK,
  timeout: TIMEOUT,
  model: MODEL,
  context: CONTEXT,
  constraint: CONSTRAINT,
  accept: ACCEPT,
  check: CHECK,
  checkTimeout: CHECK_TIMEOUT,
  attempts: ATTEMPTS,
  followUp: FOLLOW_UP,
  channel: CHANNEL,
  detach: switchFlag("--detach", "Start the task and return its id at once."),
  on: ON,
};

export const runCommand: CommandDefinition = {
  name: "run",
  group: "delegate",
  define(program: Command) {
    return withCommonOptions(
      withFlags(
        program
          .command("run")
          .description("delegate a task to an agent, in its own worktree, and follow it live")
          .usage("[options] <objective> [-- extra agent args]")
          .argument("<objective>", "what the agent should do")
          .argument("[extra...]", "after --: passed verbatim to the agent"),
        RUN_FLAGS,
      ),
    ).action(
      handle(async (ctx, objective, extra) => {
        const extraArgs = argsAfterDoubleDash(ctx.command.args.length ? rawArgsOf(ctx.command) : []);
        const stray = (extra as string[]).slice(0, (extra as string[]).length - extraArgs.length);
        if (stray.length > 0) {
          throw new UsageError(
            "stray_operand",
            `Unexpected argument ${JSON.stringify(stray[0])} after the objective.`,
            {
              detail:
                'Quote the whole objective as one argument, and put agent arguments after --: caesar run "fix it" -- --flag',
            },
          );
        }
        const request = await requestFromFlags(RUN_FLAGS, ctx.options, {
          objective: String(objective),
          extraArgs,
          cwd: ctx.cwd,
        });
        trace("run: request built");
        const { runFromCli } = await import("../run/run-task.js");
        trace("run: loaded");
        return runFromCli(ctx, request, { detach: readFlags(RUN_FLAGS, ctx.options).detach });
      }),
    );
  },
};

/** The arguments commander saw for this command (what follows `run` on the command line). */
function rawArgsOf(command: Command): string[] {
  const argv = process.argv;
  const at = argv.indexOf(command.name());
  return at === -1 ? argv : argv.slice(at + 1);
}
