import type { Command } from "commander";
import { CaesarError } from "../../support/errors.js";
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
        const { loadLiveTask, readPlan } = await import("../task-lookup.js");
        const { taskResult, applyResult } = await import("../../engine/result.js");
        const { updateState } = await import("../../engine/task-store.js");
        const record = await loadLiveTask(ctx.root, String(id), "apply");
        const state = record.state;
        if (state.phase !== "finished") {
          throw new CaesarError("task_running", `Task ${record.id} is still ${state.phase}.`, {
            detail: `Wait for it to finish (caesar logs ${record.id} --follow), or cancel it first.`,
          });
        }
        if (!state.worktree) {
          throw new CaesarError(
            "apply_inplace",
            `Task ${record.id} ran in place: its changes are already in your working tree.`,
            {
              detail: `See them with \`caesar diff ${record.id}\`.`,
            },
          );
        }
        if (state.applied && ctx.options.force !== true) {
          throw new CaesarError(
            "already_applied",
            `Task ${record.id} was already applied (${state.applied.at}).`,
            {
              detail: "Pass --force to apply it again.",
            },
          );
        }
        const plan = await readPlan(record.dir);
        const top = plan?.repo_top ?? state.root;
        const result = await taskResult(state, top);
        const applied = await applyResult(state, top, result);
        await updateState(record.dir, (current) => ({
          ...current,
          applied: { at: new Date().toISOString(), by: "cli", head: applied.head, files: applied.files },
        }));
        ctx.out.result({ id: record.id, applied: true, files: applied.files, head: applied.head }, () =>
          [
            `Applied ${record.id}: ${applied.files.length} file(s), staged in ${top}.`,
            ...applied.files.map((file) => `  ${file}`),
            "Review with `git diff --cached`, then commit.",
          ].join("\n"),
        );
      }),
    );
  },
};
