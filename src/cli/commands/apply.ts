import type { Command } from "commander";
import { type CommandDefinition, handle, withCommonOptions } from "../command.js";

export const applyCommand: CommandDefinition = {
  name: "apply",
  group: "delegate",
  define(program: Command) {
    return withCommonOptions(
      program
        .command("apply")
        .description(
          "bring a task's change into your working tree (three-way merge, staged, never over your edits)",
        )
        .argument("<id>", "task id (or a unique prefix)")
        .option("--force", "apply again a task that was already applied"),
    ).action(
      handle(async (ctx, id) => {
        const { loadLiveTask } = await import("../../engine/lifecycle/live-task.js");
        const { applyTask } = await import("../../engine/lifecycle/apply-task.js");
        const record = await loadLiveTask(ctx.root, String(id), "apply");
        const applied = await applyTask(record, { by: "cli", force: ctx.options.force === true });
        ctx.out.result({ id: record.id, applied: true, files: applied.files, head: applied.head }, () =>
          [
            `Applied ${record.id}: ${applied.files.length} file(s), staged in ${applied.top}.`,
            ...applied.files.map((file) => `  ${file}`),
            "Review with `git diff --cached`, then commit.",
          ].join("\n"),
        );
      }),
    );
  },
};
