import type { Command } from "commander";
import { Option } from "commander";
import { UsageError } from "../../support/errors.js";
import { type CommandDefinition, handle, withCommonOptions } from "../command.js";
import { collect } from "../options.js";

export const raceCommand: CommandDefinition = {
  name: "race",
  group: "delegate",
  define(program: Command) {
    return withCommonOptions(
      program
        .command("race")
        .description("one objective, several agents in their own worktrees; won on checks")
        .usage('--agent <id> --agent <id> [--check "<command>"]... [--best] <objective>')
        .argument("[objective]", "what every agent should do")
        .option(
          "--agent <id>",
          "a contender (repeat: at least two; the same agent may run twice)",
          collect,
          [],
        )
        .option(
          "--best",
          "let all finish, rank them (checks passed, smaller diff, time), instead of the first to pass",
        )
        .option(
          "--check <command>",
          "a command run in each worktree after its agent; must pass (repeatable)",
          collect,
          [],
        )
        .option("--check-timeout <duration>", "each check's deadline (default 10m)")
        .option("--attempts <n>", "when checks fail, give each agent up to n attempts (default 1)")
        .addOption(
          new Option("--follow-up <how>", "how a second attempt reaches the agent").choices([
            "resume",
            "fresh",
          ]),
        )
        .addOption(new Option("--mode <mode>", "read-only or write").choices(["read-only", "write"]))
        .addOption(new Option("--network <network>", "network for the agents").choices(["auto", "on", "off"]))
        .option("--timeout <duration>", "time allowed to each contender (e.g. 10m)")
        .option("--model <model>", "model for the agents")
        .option("--context <text|@file>", "context for the agents: text, or @file to read it")
        .option("--constraint <text>", "a constraint (repeatable)", collect, [])
        .option(
          "--accept <criterion>",
          "an acceptance criterion (repeatable); `run: <command>` is a check",
          collect,
          [],
        )
        .option("--detach", "start the race and return its id at once (its contenders settle it)")
        .option("--show <race-id>", "follow an earlier race to its decision instead of starting one"),
    ).action(
      handle(async (ctx, objective) => {
        const { raceFromCli, showRace } = await import("../run/race-task.js");
        const shown = ctx.options.show as string | undefined;
        if (shown !== undefined) {
          if (objective !== undefined) {
            throw new UsageError("race_arguments", "Give either --show <race-id> or an objective, not both.");
          }
          return showRace(ctx, shown);
        }
        if (objective === undefined) {
          throw new UsageError("race_arguments", "A race needs an objective and at least two --agent.", {
            detail: 'caesar race --agent codex --agent claude --check "npm test" "Fix the parser"',
          });
        }
        return raceFromCli(ctx, String(objective));
      }),
    );
  },
};
