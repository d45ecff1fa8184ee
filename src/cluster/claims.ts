import type { KV } from "@nats-io/kv";
import { isCasConflict, liveEntry } from "./cas.js";
import type { Cluster } from "./connection.js";
import { CLAIMS_BUCKET } from "./names.js";
import {
  type AttemptRecord,
  type Claim,
  ClaimSchema,
  decode,
  encode,
  type Final,
  type WorkerRef,
} from "./wire.js";

/**
 * Who runs a task, decided with compare-and-set on its claim (`caesar-claims`, key = task id). The
 * revision a worker wrote is its fencing token: every later step (publishing the result, acking the
 * queue message) first checks the claim still has it, so a worker that was given up on — a partition,
 * a stall — and comes back cannot publish over the one that took over.
 */
export type ClaimDecision =
  /** Ours, attempt `claim.attempt`: run the task. */
  | { kind: "run"; token: number; claim: Claim }
  /** Ours, but its earlier workers were lost and the policy (or the attempts left) says: finish it failed. */
  | { kind: "give-up"; token: number; claim: Claim }
  /** Already finished: only ack the message. */
  | { kind: "finished"; claim: Claim }
  /** A second message for a task another message's claim holds: drop it. */
  | { kind: "duplicate"; claim: Claim };

export interface ClaimPolicy {
  onWorkerLoss: "retry" | "fail";
  maxAttempts: number;
}

export async function claimsBucket(cluster: Cluster): Promise<KV> {
  return cluster.bucket(CLAIMS_BUCKET);
}

/** Read a task's claim (undefined when there is none, or it is not a valid claim). */
export async function readClaim(
  kv: KV,
  taskId: string,
): Promise<{ claim: Claim; revision: number } | undefined> {
  const entry = await liveEntry(kv, taskId);
  if (!entry) return undefined;
  const claim = decode(ClaimSchema, entry.value);
  return claim ? { claim, revision: entry.revision } : undefined;
}

/**
 * Take a task for this worker on delivery of its queue message. A message delivered again while a claim
 * for it says "running" elsewhere means that worker stopped answering (its heartbeats stopped for the
 * queue's ack wait): it is recorded as lost, and the task is run again or given up, by policy.
 */
export async function takeClaim(
  kv: KV,
  taskId: string,
  msgSeq: number,
  me: WorkerRef,
  policy: ClaimPolicy,
): Promise<ClaimDecision> {
  for (;;) {
    const entry = await kv.get(taskId);
    const now = new Date().toISOString();
    const current = entry && entry.operation === "PUT" ? decode(ClaimSchema, entry.value) : undefined;
    let next: Claim;
    if (!current) {
      next = {
        task_id: taskId,
        state: "running",
        attempt: 1,
        worker: me,
        msg_seq: msgSeq,
        claimed_at: now,
        lost: [],
        handed_back: [],
        history: [begun(1, me, now)],
        final: null,
      };
    } else if (current.state === "finished") return { kind: "finished", claim: current };
    else if (current.msg_seq !== msgSeq) return { kind: "duplicate", claim: current };
    else if (current.state === "released") {
      // Handed back by a worker that could not prepare it: no one was lost, a new attempt starts.
      next = {
        ...current,
        state: "running",
        attempt: current.attempt + 1,
        worker: me,
        claimed_at: now,
        history: [...current.history, begun(current.attempt + 1, me, now)],
      };
    } else {
      next = {
        ...current,
        attempt: current.attempt + 1,
        worker: me,
        claimed_at: now,
        lost: [...current.lost, { worker: current.worker.id, attempt: current.attempt, at: now }],
        history: [
          ...ended(
            current.history,
            current.attempt,
            "lost",
            `worker ${current.worker.id} stopped answering`,
            now,
          ),
          begun(current.attempt + 1, me, now),
        ],
      };
    }
    try {
      const token = entry
        ? await kv.update(taskId, encode(next), entry.revision)
        : await kv.create(taskId, encode(next));
      const giveUp =
        current?.state === "running" &&
        (policy.onWorkerLoss === "fail" || next.lost.length >= policy.maxAttempts);
      return giveUp ? { kind: "give-up", token, claim: next } : { kind: "run", token, claim: next };
    } catch (error) {
      if (!isCasConflict(error)) throw error;
    }
  }
}

/**
 * Hand a task back to the queue: the claim says `released` (with why), so the next worker to take it
 * starts a new attempt without counting this one as lost. Only with our token: false when another
 * worker took it over meanwhile.
 */
export async function releaseClaim(
  kv: KV,
  claim: Claim,
  token: number,
  reason: string,
  why: "handed_back" | "retried" = "handed_back",
): Promise<boolean> {
  const at = new Date().toISOString();
  const entry = { worker: claim.worker.id, attempt: claim.attempt, at, reason };
  const released: Claim = {
    ...claim,
    state: "released",
    handed_back: why === "handed_back" ? [...claim.handed_back, entry] : claim.handed_back,
    history: ended(claim.history, claim.attempt, why, reason, at),
  };
  try {
    await kv.update(claim.task_id, encode(released), token);
    return true;
  } catch (error) {
    if (isCasConflict(error)) return false;
    throw error;
  }
}

/** Does the claim still carry this worker's token? */
export async function holdsClaim(kv: KV, taskId: string, token: number): Promise<boolean> {
  const entry = await kv.get(taskId);
  return entry?.revision === token && entry.operation === "PUT";
}

/**
 * Record the task's end in its claim — only if the claim still carries `token`. False: another worker
 * took the task over; this one's result must not be published.
 */
export async function finishClaim(kv: KV, claim: Claim, token: number, final: Final): Promise<boolean> {
  try {
    const reason = final.error ? `${final.error.code}: ${final.error.message.split("\n")[0]}` : null;
    const history = ended(claim.history, claim.attempt, final.outcome, reason, final.finished_at);
    await kv.update(claim.task_id, encode({ ...claim, state: "finished", history, final }), token);
    return true;
  } catch (error) {
    if (isCasConflict(error)) return false;
    throw error;
  }
}

function begun(attempt: number, me: WorkerRef, at: string): AttemptRecord {
  return {
    attempt,
    worker: me.id,
    host: me.host,
    started_at: at,
    ended_at: null,
    outcome: "running",
    reason: null,
  };
}

/** The history with attempt `attempt` ended (how, why); the oldest entries go past 100 attempts. */
function ended(
  history: AttemptRecord[],
  attempt: number,
  outcome: string,
  reason: string | null,
  at: string,
): AttemptRecord[] {
  const next = history.map((entry) =>
    entry.attempt === attempt && entry.ended_at === null
      ? { ...entry, ended_at: at, outcome, reason: reason === null ? null : reason.slice(0, 500) }
      : entry,
  );
  return next.slice(-99);
}

/** Whether a task's claim is running under this worker — the same process, not a restarted one. */
export function isHeldBy(claim: Claim | undefined, worker: { id: string; pid: number }): boolean {
  return claim?.state === "running" && claim.worker.id === worker.id && claim.worker.pid === worker.pid;
}
