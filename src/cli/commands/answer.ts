import type { Command } from "commander";
import { type CommandDefinition, handle, withCommonOptions } from "../command.js";

export const answerCommand: CommandDefinition = {
  name: "answer",
  group: "delegate",
  define(program: Command) {
    return withCommonOptions(
      program
        .command("answer")
        .description(
          "answer a question a task asked through its return channel (once: the first answer wins)",
        )
        .argument("<id>", "task id (or a unique prefix)")
        .argument("<question-id>", "the question's id (caesar status <id> lists open questions)")
        .argument("<text>", "the answer"),
    ).action(
      handle(async (ctx, id, questionId, text) => {
        const { loadTask } = await import("../../engine/store/task-store.js");
        const { answerTask } = await import("../../engine/lifecycle/answer-task.js");
        const record = await loadTask(ctx.root, String(id));
        const answer = await answerTask(record, String(questionId), String(text), "cli");
        ctx.out.result(
          {
            task_id: record.id,
            question_id: answer.id,
            answer: answer.answer,
            answered_at: answer.answered_at,
          },
          `Answered ${answer.id} of ${record.id}.${record.state.phase === "finished" ? " (The task has already finished: its agent will not read it.)" : ""}`,
        );
      }),
    );
  },
};
