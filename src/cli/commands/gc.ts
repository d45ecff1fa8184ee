import type { Command } from "commander";
import { type CommandDefinition, handle, withCommonOptions } from "../command.js";

export const gcCommand: CommandDefinition = {
  name: "gc",
  group: "follow",
  define(program: Command) {
    return withCommonOptions(
      program
        .command("gc")
        .description("remove finished tasks' worktrees and branches (never unapplied work without --force)")
        .option("--dry-run", "say what would be removed, remove nothing")
        .option("--force", "also remove worktrees holding work that was not applied"),
    ).action(
      handle(async (ctx) => {
        const { collectGarbage } = await import("../../engine/lifecycle/gc.js");
        const { gitTopLevel } = await import("../../workspace/git.js");
        const entries = await collectGarbage(ctx.root, {
          dryRun: ctx.options.dryRun === true,
          force: ctx.options.force === true,
          repoTop: (await gitTopLevel(ctx.root)) ?? null,
        });
        ctx.out.result({ entries }, () =>
          entries.length === 0
            ? "Nothing to clean."
            : entries.map((e) => `${e.action.padEnd(13)}${e.id}  ${e.reason}`).join("\n"),
        );
      }),
    );
  },
};
