import type { KV } from "@nats-io/kv";
import { type AttemptRecord, ClaimSchema, decode } from "./wire.js";

/** Finished tasks `cluster status` lists: those that ended in the last hour, the latest few. */
const RECENT_MS = 3_600_000;
const RECENT_LISTED = 20;
/** The longest a status waits for the claims' values. */
const WATCH_LIMIT_MS = 10_000;

/** A task as `caesar cluster status` shows it: where it is, and every attempt across workers. */
export interface TaskView {
  id: string;
  /** running (a worker holds it), released (back in the queue: retried or handed back), finished. */
  state: "running" | "released" | "finished";
  /** How it ended, once finished. */
  outcome: string | null;
  /** When its claim last changed, by the server's clock. */
  updated_at: string;
  attempts: AttemptRecord[];
}

/**
 * The tasks in flight (a claim running or released) and those finished in the last hour, newest first,
 * each with its attempt history — read from the claims in one pass over the bucket (its last values).
 */
export async function readTaskViews(claims: KV, now: number): Promise<TaskView[]> {
  if ((await claims.status()).values === 0) return [];
  const inFlight: TaskView[] = [];
  const recent: TaskView[] = [];
  // Deletes too: the last of the initial values may be one, and it is the one that says they are all here.
  const watch = await claims.watch();
  // Values that expired between the count and the watch would leave it waiting: never more than this.
  const guard = setTimeout(() => watch.stop(), WATCH_LIMIT_MS);
  try {
    for await (const entry of watch) {
      const claim = entry.operation === "PUT" ? decode(ClaimSchema, entry.value) : undefined;
      if (claim) {
        const view: TaskView = {
          id: claim.task_id,
          state: claim.state,
          outcome: claim.final?.outcome ?? null,
          updated_at: entry.created.toISOString(),
          attempts: claim.history,
        };
        if (claim.state !== "finished") inFlight.push(view);
        else if (now - entry.created.getTime() <= RECENT_MS) recent.push(view);
      }
      // The last of the values the bucket held when the watch began.
      if (!entry.delta) break;
    }
  } finally {
    clearTimeout(guard);
    watch.stop();
  }
  const newest = (a: TaskView, b: TaskView) => b.updated_at.localeCompare(a.updated_at);
  return [...inFlight.sort(newest), ...recent.sort(newest).slice(0, RECENT_LISTED)];
}
