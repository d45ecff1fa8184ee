import type { Command } from "commander";
import { type CommandDefinition, handle, withCommonOptions } from "../command.js";

export const watchCommand: CommandDefinition = {
  name: "watch",
  group: "follow",
  define(program: Command) {
    return withCommonOptions(
      program
        .command("watch")
        .description(
          "follow running tasks live: per task its running tool, what it last said, silence, pending questions (read-only; q quits)",
        )
        .argument("[ids...]", "task ids or unique prefixes (default: every running task)")
        .option("--once", "print what there is now and exit (with --json: the events so far)"),
    ).action(
      handle(async (ctx, rawIds) => {
        const { resolveTaskId } = await import("../../engine/store/task-store.js");
        const { runWatch } = await import("../../ui/watch/session.js");
        const root = ctx.root;
        const typed = (rawIds as string[] | undefined) ?? [];
        const ids = [...new Set(await Promise.all(typed.map((id) => resolveTaskId(root, id))))];
        return runWatch({
          root,
          ids,
          once: ctx.options.once === true,
          json: ctx.json,
          stdout: process.stdout,
          stdin: process.stdin,
        });
      }),
    );
  },
};
