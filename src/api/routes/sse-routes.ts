import type { Context } from "hono";
import { type SSEStreamingApi, streamSSE } from "hono/streaming";
import { readEventLines } from "../../engine/follow/event-spans.js";
import { markFinishedLines } from "../../engine/store/event-owner.js";
import type { ApiContext } from "../api-context.js";
import type { IndexedTask } from "../index/indexed-task.js";
import type { StreamHello, TaskEventMessage, TaskPage, TasksUpdate } from "../response-schema.js";
import { describeTask, summarizeTask } from "../views/task-summary.js";
import type { ApiEnv } from "./guards.js";

const KEEP_ALIVE_MS = 15_000;
const BATCH = 200;
/** What EventSource waits before reconnecting (ms). */
const RETRY_MS = 1000;

/**
 * A task's live stream. Each event is sent with `id: <ordinal>` (its 1-based position among the task's
 * valid events — stable across server restarts, since it is derived from the file). A reconnecting
 * EventSource sends `Last-Event-ID`, and the stream resumes right after it: no event is lost or repeated.
 * `task` messages (no id) carry the task's summary, report and questions whenever its state.json or its
 * questions change.
 */
export function streamTaskEvents(c: Context<ApiEnv>, ctx: ApiContext, task: IndexedTask): Response {
  const resumeAfter = parseLastEventId(c.req.header("last-event-id") ?? c.req.query("after"));
  return streamSSE(c, async (stream) => {
    let sent = Math.min(resumeAfter, task.spans.length);
    let described = "";
    const seen = { taskEnd: false };
    await follow(
      stream,
      ctx,
      (change) => change.tasks.includes(task),
      async () => {
        while (sent < task.spans.length) {
          const ranges = task.spans.slice(sent, sent + BATCH);
          if (ranges.length === 0) break;
          const lines = await readEventLines(task.paths.events, ranges)
            .then((read) => markFinishedLines(read, task.dir, seen))
            .catch(() => ranges.map(() => null));
          for (const [k, line] of lines.entries()) {
            const ordinal = sent + k + 1;
            // The index keeps spans of valid events only (caesar.event/v1, validated as it read them).
            const event = (line ?? null) as TaskEventMessage["event"];
            await stream.writeSSE({
              event: "caesar",
              id: String(ordinal),
              data: JSON.stringify({ ordinal, event } satisfies TaskEventMessage),
            });
          }
          sent += ranges.length;
        }
        // The task is described again when its state or questions change (events travel on their own).
        const key = `${task.stateRevision}:${task.questionsRevision}:${task.removed}`;
        if (key !== described) {
          described = key;
          await stream.writeSSE({
            event: "task",
            data: JSON.stringify({
              runId: ctx.index.runId,
              revision: ctx.index.revision,
              ...describeTask(task),
            } satisfies TaskPage),
          });
        }
        return !task.removed;
      },
    );
  });
}

/** The workspace's live stream for the task list: `tasks` messages with the summaries of tasks that changed. */
export function streamWorkspace(c: Context<ApiEnv>, ctx: ApiContext): Response {
  return streamSSE(c, async (stream) => {
    const changed = new Set<IndexedTask>();
    let revision = ctx.index.revision;
    await follow(
      stream,
      ctx,
      (change) => {
        for (const task of change.tasks) changed.add(task);
        revision = change.revision;
        return true;
      },
      async () => {
        if (changed.size === 0) return true;
        const tasks = [...changed];
        changed.clear();
        await stream.writeSSE({
          event: "tasks",
          data: JSON.stringify({
            runId: ctx.index.runId,
            revision,
            tasks: tasks.filter((task) => !task.removed).map(summarizeTask),
            removed: tasks.filter((task) => task.removed).map((task) => task.id),
          } satisfies TasksUpdate),
        });
        return true;
      },
    );
  });
}

/**
 * The loop both streams share: greet (with the current run and revision), then run `pump` once at the
 * start and after every index change `wanted` accepts, until the client goes, the server closes, or
 * `pump` says the subject is gone. Keeps the connection alive with comments.
 */
async function follow(
  stream: SSEStreamingApi,
  ctx: ApiContext,
  wanted: (change: Parameters<Parameters<ApiContext["index"]["onChange"]>[0]>[0]) => boolean,
  pump: () => Promise<boolean>,
): Promise<void> {
  let stopped = false;
  let notified = true;
  let wake: (() => void) | undefined;
  const stop = () => {
    stopped = true;
    wake?.();
  };
  const off = ctx.index.onChange((change) => {
    if (!wanted(change)) return;
    notified = true;
    wake?.();
  });
  const unregister = ctx.streams.add(stop);
  stream.onAbort(stop);
  const keepAlive = setInterval(() => void stream.write(": keep-alive\n\n"), KEEP_ALIVE_MS);
  try {
    await stream.writeSSE({
      event: "hello",
      retry: RETRY_MS,
      data: JSON.stringify({ runId: ctx.index.runId, revision: ctx.index.revision } satisfies StreamHello),
    });
    while (!stopped && !stream.aborted) {
      if (notified) {
        notified = false;
        if (!(await pump())) break;
        continue;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
  } finally {
    clearInterval(keepAlive);
    off();
    unregister();
  }
}

export function parseLastEventId(raw: string | undefined): number {
  if (raw === undefined || !/^\d{1,15}$/.test(raw.trim())) return 0;
  return Number(raw.trim());
}
