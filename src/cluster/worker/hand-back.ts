import { isCaesarError, messageOf } from "../../support/errors.js";
import { releaseClaim } from "../claims.js";
import { remoteRef } from "../git-refs.js";
import { startRefName } from "../names.js";
import type { Claim, Final } from "../wire.js";
import type { WorkerContext } from "./context.js";
import type { HeldTask } from "./held-task.js";
import { emptyFinal, publishFinal } from "./publish-final.js";

/** The first hand-back's delay before the queue offers the task again; doubled for each next, up to a minute. */
const BACKOFF_MS = 2_000;
const MAX_BACKOFF_MS = 60_000;

/**
 * Whose fault is it that this worker could not prepare a task? Its own — its remote out of reach, its
 * disk full, its clone broken — or the task's (its starting point gone from the remote, a typed refusal).
 * A worker's own fault must never become the task's failure: such a task goes back to the queue.
 */
export async function isOwnFault(context: WorkerContext, taskId: string, error: unknown): Promise<boolean> {
  if (!isCaesarError(error)) return true;
  if (error.code === "disk_full") return true;
  if (error.code !== "start_fetch_failed") return false;
  // The fetch failed: does the remote, as this worker reaches it, still hold the starting point?
  try {
    return (await remoteRef(context.top, context.gitRemote, startRefName(taskId))) !== "";
  } catch {
    return true; // this worker cannot read its remote at all
  }
}

/**
 * Hand the task back to the queue with a growing delay, for another worker (the claim says `released`,
 * so no worker counts as lost). Once as many different workers as the task's `max_attempts` handed it
 * back, the fault is not one worker's: it is finished failed with the last reason.
 */
export async function handBack(
  context: WorkerContext,
  task: HeldTask,
  claim: Claim,
  token: number,
  error: unknown,
  maxAttempts: number,
): Promise<void> {
  const reason = `${isCaesarError(error) ? `${error.code}: ` : ""}${messageOf(error)}`;
  const workers = new Set([...claim.handed_back.map((entry) => entry.worker), context.me.id]);
  if (workers.size >= maxAttempts) {
    const final: Final = {
      ...emptyFinal("failed"),
      error: {
        code: "workers_could_not_prepare",
        message: `${workers.size} workers (${[...workers].join(", ")}) could not prepare the task; the last said: ${reason}`,
      },
    };
    await publishFinal(context, task, claim, token, final);
    return;
  }
  if (!(await releaseClaim(context.claims, claim, token, reason).catch(() => false))) return;
  const delay = Math.min(MAX_BACKOFF_MS, BACKOFF_MS * 2 ** claim.handed_back.length);
  task.msg.nak(delay);
  context.log(
    `[worker] ${claim.task_id}: handed back to the queue (offered again in ${Math.round(delay / 1000)} s): ${reason}`,
  );
}
