import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { AWAIT_MAX_TIMEOUT_MS, AwaitRequestSchema, awaitTasks } from "../engine/follow/await-tasks.js";
import { viewTask } from "../engine/follow/task-view.js";
import { loadLiveTask } from "../engine/lifecycle/live-task.js";
import { recoverTask } from "../engine/lifecycle/recover.js";
import { listChildren } from "../engine/lifecycle/subtree.js";
import { loadAllTasks } from "../engine/store/task-store.js";
import * as z from "../support/zod.js";
import type { OrchestratorContext } from "./context.js";
import { blocksOf } from "./delegate-result.js";
import { keepAlive } from "./progress.js";
import { runTool, toolResult } from "./tool-result.js";

const STATUS_LIST_LIMIT = 30;

/** caesar_await and caesar_status: where tasks are, their reports, their open questions. */
export function registerAwaitTools(server: McpServer, context: OrchestratorContext): void {
  server.registerTool(
    "caesar_await",
    {
      title: "Wait for delegated tasks",
      description: [
        "Wait for one or more delegated tasks (1 to 128 ids) until they have all finished or `timeout_ms` passes (default 30000, at most 120000 — more is clamped to it and the result says so; call again to wait longer).",
        'Returns {status: "complete"|"timeout", completed, pending, missing, failed, results}: `completed` counts successes, `pending` / `missing` / `failed` list ids, and `results` has one entry per task found with its phase, outcome and, once finished, its normalized `report` (status, summary, changes verified by git, findings, report_source).',
        "Like the delegation reference's await_sessions, the call is an error (isError, with the same result) unless every task finished successfully: some still pending or missing, or some failed, timed out or were cancelled.",
        "Over several ids, once none is pending, the text also gives the delegation reference's per-task blocks: `[Parallel delegation: <N> agents]`, then `--- <agent> (success=true) ---` and its result, or `--- <agent> (success=false) ---` and `Error: …`.",
        "A pending task lists its `open_questions`: answer them with caesar_answer, or it will proceed on its own judgement when its wait ends.",
      ].join(" "),
      inputSchema: AwaitRequestSchema.shape,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args, extra) =>
      runTool(async () => {
        const stop = keepAlive(extra, `waiting for ${args.task_ids.length} task(s)`, args.timeout_ms);
        try {
          const result = await awaitTasks(context.root, args, {
            signal: AbortSignal.any([context.session, extra.signal]),
            by: "mcp",
          });
          const questions = result.results.reduce((sum, view) => sum + view.open_questions.length, 0);
          const headline =
            result.status === "complete"
              ? `All ${result.results.length} task(s) finished: ${result.completed} succeeded, ${result.failed.length} did not.`
              : `${result.pending.length} task(s) still running${questions ? `, ${questions} open question(s) waiting for caesar_answer` : ""}; ${result.results.length - result.pending.length} finished.`;
          // As the delegation reference's await_sessions: success only when every task finished well.
          const problem =
            result.pending.length > 0 || result.missing.length > 0
              ? "Not complete: one or more tasks are still pending or missing."
              : result.failed.length > 0
                ? "Not all succeeded: one or more tasks failed or were cancelled."
                : undefined;
          const text = [
            problem,
            headline,
            result.timeout_clamped_from !== null
              ? `timeout_ms ${result.timeout_clamped_from} was clamped to ${AWAIT_MAX_TIMEOUT_MS}, the most one call waits: call caesar_await again to wait longer.`
              : undefined,
            result.missing.length > 0 ? `No such task: ${result.missing.join(", ")}.` : undefined,
            // Several tasks, all settled: one block each, as the reference's fan-out answers.
            args.task_ids.length > 1 && result.pending.length === 0
              ? `\n${await blocksOf(context.root, args.task_ids, result.results)}\n`
              : undefined,
          ]
            .filter(Boolean)
            .join(" ");
          const answer = toolResult({ ...result }, text);
          return problem ? { ...answer, isError: true } : answer;
        } finally {
          stop();
        }
      }),
  );

  server.registerTool(
    "caesar_status",
    {
      title: "Look at a task (or list tasks)",
      description: [
        "With `task_id` (or a unique prefix): one task now, without waiting — phase (queued, preparing, running, finishing, finished), outcome, timing, worktree and branch, open questions, its sub-tasks (`children`: bounded or independent, phase, outcome, who cancelled them), and its normalized report once finished.",
        `Without it: the tasks of this project, running ones first, then the most recent (at most ${STATUS_LIST_LIMIT}), one line each.`,
      ].join(" "),
      inputSchema: {
        task_id: z.string().optional().describe("The task id, or a unique prefix of it. Omit to list tasks."),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args) =>
      runTool(async () => {
        if (args.task_id !== undefined) {
          const view = await viewTask(await loadLiveTask(context.root, args.task_id, "mcp"));
          const children = await listChildren(context.root, view.task_id).catch(() => []);
          return toolResult({ ...view, children });
        }
        const records = await loadAllTasks(context.root);
        const running = records.filter((record) => record.state.phase !== "finished");
        const recent = records.filter((record) => record.state.phase === "finished");
        const shown = [...running, ...recent].slice(0, STATUS_LIST_LIMIT);
        const tasks = await Promise.all(
          shown.map(async (record) => {
            const state = await recoverTask(record, "mcp");
            const view = await viewTask({ ...record, state });
            return {
              task_id: view.task_id,
              agent: view.agent,
              objective: view.objective.split("\n")[0]!.slice(0, 120),
              phase: view.phase,
              outcome: view.outcome,
              report_status: view.report?.status ?? null,
              open_questions: view.open_questions.length,
              created_at: view.created_at,
            };
          }),
        );
        return toolResult(
          { total: records.length, tasks },
          records.length === 0 ? "No tasks in this project yet." : undefined,
        );
      }),
  );
}
