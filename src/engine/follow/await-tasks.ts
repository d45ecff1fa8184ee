import { existsSync } from "node:fs";
import { formatProblem, problemsOf } from "../../protocol/documents.js";
import { isValidTaskId } from "../../protocol/ids.js";
import { taskPaths } from "../../protocol/task-dir.js";
import { UsageError } from "../../support/errors.js";
import * as z from "../../support/zod.js";
import { recoverTask } from "../lifecycle/recover.js";
import { RAW_OUTPUT_FILES, watchPath } from "../store/change-watch.js";
import { readState, taskDirOf } from "../store/task-store.js";
import { isSuccessfulFinish, type TaskView, viewTask } from "./task-view.js";

export const AWAIT_MAX_IDS = 128;
export const AWAIT_DEFAULT_TIMEOUT_MS = 30_000;
export const AWAIT_MAX_TIMEOUT_MS = 120_000;

const ID_RULE =
  "a task id is 1–128 letters, digits, '_', '-' or '.', starting with a letter or digit (e.g. t_7f3a9c21)";

/** The arguments of a batched wait, validated at the edge by every front end (MCP, HTTP). */
export const AwaitRequestSchema = z.object({
  task_ids: z
    .array(
      z.string().refine(isValidTaskId, {
        error: (issue) => `Invalid task_id ${JSON.stringify(issue.input)}: ${ID_RULE}.`,
      }),
    )
    .min(1, "task_ids must contain at least one task id.")
    .max(
      AWAIT_MAX_IDS,
      `task_ids must contain no more than ${AWAIT_MAX_IDS} task ids: await them in batches.`,
    )
    .superRefine((ids, ctx) => {
      const seen = new Set<string>();
      ids.forEach((id, index) => {
        if (seen.has(id))
          ctx.addIssue({
            code: "custom",
            path: [index],
            message: `Duplicate task_id ${JSON.stringify(id)} in task_ids.`,
          });
        seen.add(id);
      });
    })
    .describe(
      `The tasks to wait for: 1 to ${AWAIT_MAX_IDS} distinct task ids, as caesar_delegate returned them.`,
    ),
  timeout_ms: z
    .number()
    .int("timeout_ms must be an integer number of milliseconds.")
    .min(0, "timeout_ms must be 0 or more.")
    .default(AWAIT_DEFAULT_TIMEOUT_MS)
    .describe(
      `How long to wait at most, in ms (default ${AWAIT_DEFAULT_TIMEOUT_MS}; more than ${AWAIT_MAX_TIMEOUT_MS} is clamped to it, and the result says so: call again to wait longer). 0 = look once, do not wait.`,
    ),
});
export type AwaitRequest = z.input<typeof AwaitRequestSchema>;

export interface AwaitResult {
  /** complete: no task is left running; timeout: the wait ended with tasks still pending. */
  status: "complete" | "timeout";
  /** How many tasks finished successfully (process succeeded, report not `failed`). */
  completed: number;
  /** Tasks still queued or running (their open questions are in `results`). */
  pending: string[];
  /** Ids with no task directory in this project. */
  missing: string[];
  /** Tasks that finished without success: failed, cancelled, timed out, or a `failed` report. */
  failed: string[];
  /** Every task found, in request order, with its normalized report once finished. */
  results: TaskView[];
  /** The `timeout_ms` asked for when it was more than one wait's cap (and was clamped to it); else null. */
  timeout_clamped_from: number | null;
}

/** Validate a batched wait's arguments, refusing with every problem named (UsageError). */
export function parseAwaitRequest(raw: unknown): z.output<typeof AwaitRequestSchema> {
  const parsed = AwaitRequestSchema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  throw new UsageError("invalid_await", "Invalid arguments for await.", {
    detail: problemsOf(parsed.error).map(formatProblem).join("\n"),
  });
}

/**
 * Wait for several tasks at once, at most `timeout_ms`, and say where each one is: the shape of the
 * delegation reference's `await_sessions`. Tasks run under their own conductors; this only reads their
 * files (and finishes a task whose conductor is proven dead). Missing ids do not hold the wait: a task's
 * directory exists before its id is ever returned, so an id that has none now will never have one.
 */
export async function awaitTasks(
  root: string,
  raw: AwaitRequest,
  options: { signal?: AbortSignal; by?: string } = {},
): Promise<AwaitResult> {
  const request = parseAwaitRequest(raw);
  // One wait is capped, as the delegation reference caps it: more is clamped, never refused, and said.
  const clamped = request.timeout_ms > AWAIT_MAX_TIMEOUT_MS ? request.timeout_ms : null;
  const deadline = Date.now() + Math.min(request.timeout_ms, AWAIT_MAX_TIMEOUT_MS);
  for (;;) {
    const look = {
      ...(await lookAt(root, request.task_ids, options.by ?? "await")),
      timeout_clamped_from: clamped,
    };
    const remaining = deadline - Date.now();
    if (look.pending.length === 0 || remaining <= 0 || options.signal?.aborted) return look;
    await waitForAnyChange(
      look.pending.map((id) => taskDirOf(root, id)),
      Math.min(remaining, 5_000),
      options.signal,
    );
  }
}

/**
 * Wait for several tasks with no cap: until none is pending, or `signal` aborts (the caller is gone). The
 * synchronous delegation's wait (caesar_delegate and caesar_fanout with `wait`): each task's own deadline
 * bounds it, and caesar enforces that deadline whether anyone waits or not.
 */
export async function awaitFinished(
  root: string,
  ids: string[],
  options: { signal?: AbortSignal; by?: string } = {},
): Promise<AwaitResult> {
  for (;;) {
    const result = await awaitTasks(root, { task_ids: ids, timeout_ms: AWAIT_MAX_TIMEOUT_MS }, options);
    if (result.status === "complete" || options.signal?.aborted) return result;
  }
}

async function lookAt(
  root: string,
  ids: string[],
  by: string,
): Promise<Omit<AwaitResult, "timeout_clamped_from">> {
  const results: TaskView[] = [];
  const missing: string[] = [];
  for (const id of ids) {
    const dir = taskDirOf(root, id);
    const paths = taskPaths(dir);
    if (!existsSync(paths.state)) {
      missing.push(id);
      continue;
    }
    try {
      const record = { id, dir, paths, state: await readState(dir) };
      const state = await recoverTask(record, by);
      results.push(await viewTask({ ...record, state }));
    } catch {
      missing.push(id);
    }
  }
  const pending = results.filter((view) => view.phase !== "finished").map((view) => view.task_id);
  const finished = results.filter((view) => view.phase === "finished");
  const failed = finished.filter((view) => !isSuccessfulFinish(view)).map((view) => view.task_id);
  return {
    status: pending.length === 0 ? "complete" : "timeout",
    completed: finished.length - failed.length,
    pending,
    missing,
    failed,
    results,
  };
}

/** Resolve as soon as anything changes in one of `dirs`, after `timeoutMs`, or when aborted. */
function waitForAnyChange(dirs: string[], timeoutMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const stops: (() => void)[] = [];
    const done = () => {
      clearTimeout(timer);
      for (const stop of stops) stop();
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    signal?.addEventListener("abort", done, { once: true });
    for (const dir of dirs) stops.push(watchPath(dir, done, { pollMs: 1_000, ignore: RAW_OUTPUT_FILES }));
  });
}
