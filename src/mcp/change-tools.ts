import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { answerTask } from "../engine/lifecycle/answer-task.js";
import { applyTask } from "../engine/lifecycle/apply-task.js";
import { cancelTask } from "../engine/lifecycle/cancel.js";
import { loadLiveTask } from "../engine/lifecycle/live-task.js";
import { loadTask } from "../engine/store/task-store.js";
import * as z from "../support/zod.js";
import { callerOf, type OrchestratorContext } from "./context.js";
import { runTool, toolResult } from "./tool-result.js";

const taskId = z.string().describe("The task id, or a unique prefix of it.");

/** caesar_apply, caesar_cancel, caesar_answer: the tools that act. */
export function registerChangeTools(server: McpServer, context: OrchestratorContext): void {
  server.registerTool(
    "caesar_apply",
    {
      title: "Apply a task's change to the working tree",
      description: [
        "Bring a finished worktree task's verified change into the user's working tree: a three-way merge with their current HEAD, staged (not committed) so they can review it with `git diff --cached`.",
        "Refuses and changes nothing if it would overwrite their uncommitted edits, if it conflicts with newer commits, if the task still runs, ran in place, or was already applied (`force: true` applies it again).",
        "Look at it first with caesar_diff.",
      ].join(" "),
      inputSchema: {
        task_id: taskId,
        force: z.boolean().optional().describe("Apply again a task that was already applied."),
      },
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    async (args) =>
      runTool(async () => {
        const record = await loadLiveTask(context.root, args.task_id, "mcp");
        const caller = await callerOf(context, `caesar_apply ${record.id}`);
        const applied = await applyTask(record, { by: "mcp", force: args.force === true, caller });
        return toolResult(
          {
            task_id: record.id,
            applied: true,
            files: applied.files,
            head: applied.head,
            staged_in: applied.top,
          },
          `Applied ${record.id}: ${applied.files.length} file(s) staged. Review with \`git diff --cached\`, then commit.`,
        );
      }),
  );

  server.registerTool(
    "caesar_cancel",
    {
      title: "Cancel a task",
      description:
        "Stop a queued or running task and its agent's whole process group, and its bounded sub-tasks with it (`cascaded`; independent ones keep running). Its report says it was cancelled; what it changed so far stays visible with caesar_diff. A finished task is left as it is (`cancelled: false`).",
      inputSchema: { task_id: taskId },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async (args) =>
      runTool(async () => {
        const record = await loadTask(context.root, args.task_id);
        const caller = await callerOf(context, `caesar_cancel ${record.id}`);
        const { state, changed, cascaded } = await cancelTask(record, "mcp", { caller });
        return toolResult(
          { task_id: record.id, cancelled: changed, phase: state.phase, outcome: state.outcome, cascaded },
          changed
            ? `${record.id} cancelled.`
            : `${record.id} had already finished (${state.outcome ?? "?"}).`,
        );
      }),
  );

  server.registerTool(
    "caesar_answer",
    {
      title: "Answer a task's question",
      description: [
        "Answer a question a running task asked through its return channel (caesar_await and caesar_status list them under `open_questions`, with their ids). The agent is waiting for it and continues with your answer.",
        "One answer per question: answering an unknown or already-answered question fails and writes nothing.",
      ].join(" "),
      inputSchema: {
        task_id: taskId,
        question_id: z.string().describe("The question's id (e.g. q_1a2b3c4d)."),
        answer: z.string().min(1).describe("Your answer, self-contained."),
      },
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    async (args) =>
      runTool(async () => {
        const record = await loadTask(context.root, args.task_id);
        const caller = await callerOf(context, `caesar_answer ${record.id} ${args.question_id}`);
        const answer = await answerTask(record, args.question_id, args.answer, "mcp", { caller });
        return toolResult(
          {
            task_id: record.id,
            question_id: answer.id,
            answered_at: answer.answered_at,
            task_phase: record.state.phase,
          },
          record.state.phase === "finished"
            ? `Answer recorded, but ${record.id} has already finished: its agent will not read it.`
            : `Answer delivered to ${record.id}.`,
        );
      }),
  );
}
