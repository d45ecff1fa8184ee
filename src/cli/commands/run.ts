import type { Command } from "commander";
import { Option } from "commander";
import { UsageError } from "../../support/errors.js";
import { type CommandDefinition, handle, withCommonOptions } from "../command.js";
import { argsAfterDoubleDash, collect } from "../options.js";

export const runCommand: CommandDefinition = {
  name: "run",
  group: "delegate",
  define(program: Command) {
    return withCommonOptions(
      program
        .command("run")
        .description("delegate a task to an agent, in its own worktree, and follow it live")
        .usage("[options] <objective> [-- extra agent args]")
        .argument("<objective>", "what the agent should do")
        .argument("[extra...]", "after --: passed verbatim to the agent")
        .option("--agent <id>", "the agent to run (see `caesar agents list`)")
        .option("--role <name>", "a role: picks the agent and its defaults")
        .addOption(new Option("--mode <mode>", "read-only or write").choices(["read-only", "write"]))
        .addOption(
          new Option("--isolation <isolation>", "where the agent works").choices([
            "auto",
            "inplace",
            "worktree",
          ]),
        )
        .addOption(new Option("--network <network>", "network for the agent").choices(["auto", "on", "off"]))
        .option("--timeout <duration>", "time allowed (e.g. 10m, 1h30m) — task.json deadline_ms")
        .option("--model <model>", "model for the agent")
        .option("--context <text|@file>", "context for the agent: text, or @file to read it")
        .option("--constraint <text>", "a constraint (repeatable)", collect, [])
        .option(
          "--accept <criterion>",
          "an acceptance criterion (repeatable); `run: <command>` is a check",
          collect,
          [],
        )
        .option(
          "--check <command>",
          "a command run in the workspace after the agent; must pass (repeatable)",
          collect,
          [],
        )
        .option("--check-timeout <duration>", "each check's deadline (default 10m), never past the task's")
        .option("--attempts <n>", "when checks fail, give the agent up to n attempts in all (default 1)")
        .addOption(
          new Option("--follow-up <how>", "how a second attempt reaches the agent").choices([
            "resume",
            "fresh",
          ]),
        )
        .option("--channel", "give the agent the return channel (questions, progress, report)")
        .option("--detach", "start the task and return its id at once")
        .option(
          "--on <nats-url|local>",
          "run on the pool of workers behind this NATS server (default: [cluster] nats), or `local`",
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
        const { runFromCli } = await import("../run/run-task.js");
        return runFromCli(ctx, String(objective), extraArgs);
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
