import type { Command } from "commander";
import { type CommandDefinition, handle, withCommonOptions } from "../command.js";

export const cancelCommand: CommandDefinition = {
  name: "cancel",
  group: "delegate",
  define(program: Command) {
    return withCommonOptions(
      program
        .command("cancel")
        .description(
          "stop a task and its agent's whole process group, and its bounded sub-tasks (independent ones keep running)",
        )
        .argument("<id>", "task id (or a unique prefix)"),
    ).action(
      handle(async (ctx, id) => {
        const { loadTask } = await import("../../engine/store/task-store.js");
        const { cancelTask } = await import("../../engine/lifecycle/cancel.js");
        const record = await loadTask(ctx.root, String(id));
        const { state, changed, cascaded } = await cancelTask(record, "cli");
        ctx.out.result(
          { id: record.id, cancelled: changed, phase: state.phase, outcome: state.outcome, cascaded },
          () =>
            [
              changed
                ? `${record.id} cancelled (${state.outcome ?? state.phase}).`
                : `${record.id} had already finished (${state.outcome ?? "?"}); nothing to cancel.`,
              ...cascaded.map(
                (sub) =>
                  `  ${sub.id} (bounded sub-task): ${sub.changed ? `cancelled (${sub.outcome ?? sub.phase})` : `already ${sub.outcome ?? sub.phase}`}`,
              ),
            ].join("\n"),
        );
        return 0;
      }),
    );
  },
};
