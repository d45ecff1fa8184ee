import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { loadLiveTask, readPlan } from "../engine/lifecycle/live-task.js";
import { taskPatch, taskResult } from "../engine/lifecycle/result.js";
import { assertMayRead } from "../engine/lifecycle/subtree-read.js";
import { readEvents } from "../engine/store/event-log.js";
import { markFinishedEvents } from "../engine/store/event-owner.js";
import { openTaskFileOrNothing } from "../engine/store/task-files.js";
import { readState } from "../engine/store/task-store.js";
import * as z from "../support/zod.js";
import { callerOf, type OrchestratorContext } from "./context.js";
import { runTool, toolResult } from "./tool-result.js";

const taskId = z.string().describe("The task id, or a unique prefix of it.");

/** caesar_logs and caesar_diff: what a task did, and what it changed. */
export function registerInspectTools(server: McpServer, context: OrchestratorContext): void {
  server.registerTool(
    "caesar_logs",
    {
      title: "Read a task's events (or raw output)",
      description: [
        "What a task has been doing: its caesar.event/v1 events (started, thinking, message, tool_use, file_changed, progress, question, answer, error, finished), oldest first.",
        "Page with `after_seq` (events after that sequence number; the result gives `next_after_seq`) and `limit` (the last N of them).",
        "With `raw: true`, the tail of the agent's raw stdout/stderr instead (`tail_bytes`), to diagnose a failure.",
      ].join(" "),
      inputSchema: {
        task_id: taskId,
        raw: z.boolean().optional().describe("The agent's raw output instead of events."),
        after_seq: z.number().int().min(-1).optional().describe("Only events with a greater seq."),
        limit: z
          .number()
          .int()
          .min(1)
          .max(1_000)
          .default(200)
          .describe("At most this many events (the latest)."),
        tail_bytes: z
          .number()
          .int()
          .min(1)
          .max(256 * 1024)
          .default(16 * 1024)
          .describe("With raw: how many bytes from the end."),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args) =>
      runTool(async () => {
        const record = await loadLiveTask(context.root, args.task_id, "mcp");
        if (args.raw) {
          const tail = await readTail(record.paths.raw, args.tail_bytes);
          return toolResult({ task_id: record.id, phase: record.state.phase, ...tail });
        }
        const read = await readEvents(record.paths.events);
        // Read after the events, the task's record names caesar's `finished` among them.
        const events = markFinishedEvents(read.events, await readState(record.dir).catch(() => record.state));
        const after = args.after_seq ?? -1;
        const newer = events.filter((event) => event.seq > after);
        const shown = newer.slice(-args.limit);
        const last = events.at(-1)?.seq ?? after;
        return toolResult({
          task_id: record.id,
          phase: record.state.phase,
          events: shown,
          omitted: newer.length - shown.length,
          next_after_seq: Math.max(after, last),
        });
      }),
  );

  server.registerTool(
    "caesar_diff",
    {
      title: "See a task's verified change",
      description: [
        "The change a task made, as git sees it against the commit it started from (its report's `changes` are the agent's word; this is the truth): the changed files and the patch.",
        "Recomputed now, so it also shows a running task's work so far. `stat: true` gives only the summary. Long patches are cut at `max_bytes` (`truncated: true`).",
        "Then caesar_apply brings it into the user's working tree.",
      ].join(" "),
      inputSchema: {
        task_id: taskId,
        stat: z.boolean().optional().describe("Only the per-file summary, not the patch."),
        max_bytes: z
          .number()
          .int()
          .min(1_000)
          .max(2_000_000)
          .default(200_000)
          .describe("Cut the patch after this many bytes."),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args) =>
      runTool(async () => {
        const record = await loadLiveTask(context.root, args.task_id, "mcp");
        await assertMayRead(context.root, record.id, "caesar_diff", {
          caller: await callerOf(context, `caesar_diff ${record.id}`),
        });
        const plan = await readPlan(record.dir);
        const result = await taskResult(record.state, plan?.repo_top ?? null);
        const patch = await taskPatch(result, { stat: args.stat === true });
        const bytes = Buffer.byteLength(patch);
        const truncated = bytes > args.max_bytes;
        return toolResult(
          {
            task_id: record.id,
            from: result.from,
            to: result.to,
            origin: result.origin,
            changes: result.changes,
            patch: truncated ? Buffer.from(patch).subarray(0, args.max_bytes).toString("utf8") : patch,
            bytes,
            truncated,
          },
          result.changes.length === 0
            ? `${record.id}: no changes.`
            : `${record.id}: ${result.changes.length} file(s) changed.`,
        );
      }),
  );
}

async function readTail(
  path: string,
  bytes: number,
): Promise<{ raw: string; size: number; truncated: boolean }> {
  const handle = await openTaskFileOrNothing(path, "read", { maxBytes: Number.MAX_SAFE_INTEGER });
  if (!handle) return { raw: "", size: 0, truncated: false };
  try {
    const { size } = await handle.stat();
    const length = Math.min(size, bytes);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    return { raw: buffer.toString("utf8"), size, truncated: size > length };
  } finally {
    await handle.close();
  }
}
