import type { Command } from "commander";
import { type CommandDefinition, handle, withCommonOptions } from "../command.js";

export const diffCommand: CommandDefinition = {
  name: "diff",
  group: "follow",
  define(program: Command) {
    return withCommonOptions(
      program
        .command("diff")
        .description("a task's verified change, as git sees it against its starting point")
        .argument("<id>", "task id (or a unique prefix)")
        .option("--stat", "only the summary of changed files"),
    ).action(
      handle(async (ctx, id) => {
        const { loadLiveTask, readPlan } = await import("../../engine/lifecycle/live-task.js");
        const { taskResult, taskPatch } = await import("../../engine/lifecycle/result.js");
        const { assertMayRead } = await import("../../engine/lifecycle/subtree-read.js");
        const record = await loadLiveTask(ctx.root, String(id), "diff");
        await assertMayRead(ctx.root, record.id, "diff", { cwd: ctx.cwd });
        const plan = await readPlan(record.dir);
        const result = await taskResult(record.state, plan?.repo_top ?? null);
        const patch = await taskPatch(result, { stat: ctx.options.stat === true });
        ctx.out.result(
          {
            id: record.id,
            from: result.from,
            to: result.to,
            origin: result.origin,
            changes: result.changes,
            patch,
          },
          () => (patch === "" ? `${record.id}: no changes.` : patch),
        );
      }),
    );
  },
};
