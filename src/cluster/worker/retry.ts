import type { RetryPolicy } from "../../engine/store/task-plan.js";
import { releaseClaim } from "../claims.js";
import type { Claim, Final } from "../wire.js";
import type { WorkerContext } from "./context.js";
import type { HeldTask } from "./held-task.js";

/** The longest wait before a transient failure's next attempt. */
const MAX_BACKOFF_MS = 5 * 60_000;

/** The attempts of this task that ended in a transient failure and went back to the queue. */
function retriedAttempts(claim: Claim): Claim["history"] {
  return claim.history.filter((entry) => entry.outcome === "retried");
}

/**
 * Should this failed attempt run again? Only a failure whose code the task's `[cluster] retry` lists
 * (by default the model provider's: rate limits, 5xx, unreachable), and only while attempts are left.
 * The wait before the next attempt: the policy's backoff, doubled for each earlier retry, at most 5 min.
 */
export function transientRetry(
  policy: RetryPolicy,
  claim: Claim,
  final: Final,
): { delayMs: number } | undefined {
  if (final.outcome !== "failed" || !final.error || !policy.on.includes(final.error.code)) return undefined;
  const retried = retriedAttempts(claim).length;
  if (retried + 1 >= policy.attempts) return undefined;
  return { delayMs: Math.min(MAX_BACKOFF_MS, policy.backoff_ms * 2 ** retried) };
}

/**
 * Put the task back in the queue for a later attempt (on any worker): the claim says `released`, its
 * history `retried` with why, and the queue offers the message again after the delay.
 */
export async function retryLater(
  context: WorkerContext,
  task: HeldTask,
  claim: Claim,
  token: number,
  final: Final,
  delayMs: number,
): Promise<boolean> {
  const reason = `${final.error!.code}: ${final.error!.message.split("\n")[0]}`;
  if (!(await releaseClaim(context.claims, claim, token, reason, "retried").catch(() => false))) return false;
  task.msg.nak(delayMs);
  context.log(
    `[worker] ${claim.task_id}: attempt ${claim.attempt} failed transiently (${final.error!.code}); offered again in ${Math.round(delayMs / 1000)} s`,
  );
  return true;
}

/**
 * The final failure of a task that was retried says how many attempts were made and why each failed,
 * before its own message.
 */
export function withAttempts(claim: Claim, final: Final): Final {
  const retried = retriedAttempts(claim);
  if (retried.length === 0 || !final.error) return final;
  const lines = retried.map(
    (entry) => `attempt ${entry.attempt} on ${entry.worker}: ${entry.reason ?? "failed"}`,
  );
  const total = retried.length + 1;
  return {
    ...final,
    error: {
      code: final.error.code,
      message: `Failed after ${total} attempts (${lines.join("; ")}; attempt ${claim.attempt} on ${claim.worker.id}: ${final.error.code}). ${final.error.message}`,
    },
  };
}
