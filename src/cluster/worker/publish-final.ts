import type { TaskState } from "../../engine/store/state.js";
import { messageOf } from "../../support/errors.js";
import { resultRefName } from "../../workspace/result-ref.js";
import { finishClaim, holdsClaim } from "../claims.js";
import { pushResult, remoteRef } from "../git-refs.js";
import type { Claim, Final } from "../wire.js";
import type { WorkerContext } from "./context.js";
import { type HeldTask, retrying } from "./held-task.js";

/**
 * Record the end in the claim (only with our token: false when another worker took over), then ack the
 * queue message. A crash between the two is safe: the redelivery finds the claim finished and only acks.
 */
export async function publishFinal(
  context: WorkerContext,
  task: HeldTask,
  claim: Claim,
  token: number,
  final: Final,
): Promise<boolean> {
  const recorded = await retrying(context, `finish ${claim.task_id}`, () =>
    finishClaim(context.claims, claim, token, final),
  );
  if (recorded === undefined) return false; // the server stayed away: the queue gives the task out again
  if (!recorded) {
    context.log(`[worker] ${claim.task_id}: not published — its claim belongs to another worker now`);
    return false;
  }
  await ackFor(context, task, claim.task_id);
  context.log(
    `[worker] ${claim.task_id}: ${final.outcome}${final.report ? ` (${final.report.status})` : ""}`,
  );
  return true;
}

export async function ackFor(context: WorkerContext, task: HeldTask, id: string): Promise<void> {
  await retrying(context, `ack ${id}`, () => task.msg.ackAck({ timeout: 5_000 }));
}

export function emptyFinal(outcome: Final["outcome"]): Final {
  return {
    outcome,
    exit: null,
    report_status: null,
    report: null,
    error: null,
    started_at: null,
    finished_at: new Date().toISOString(),
    deadline_at: null,
    command: null,
    base_ref: null,
    start_tree: null,
    end_tree: null,
    result_commit: null,
    log_seq: 0,
  };
}

export function finalOf(state: TaskState, logSeq: number): Final {
  return {
    outcome: state.outcome ?? "failed",
    exit: state.exit,
    report_status: state.report_status,
    report: state.report,
    error: state.error,
    started_at: state.started_at,
    finished_at: state.finished_at ?? new Date().toISOString(),
    deadline_at: state.deadline_at,
    command: state.command,
    base_ref: state.base_ref,
    start_tree: state.start_tree,
    end_tree: state.end_tree,
    result_commit: state.result_commit,
    log_seq: logSeq,
  };
}

/**
 * Push the result as `refs/caesar/tasks/<id>`, only where there is none yet; when there is one (pushed by
 * a worker that was given up on, or by one that took over), check the claim is still ours before pushing
 * over it: a worker that lost its claim never overwrites the result of the one that holds it.
 */
export async function pushResultFenced(
  context: WorkerContext,
  id: string,
  commit: string,
  token: number,
): Promise<"pushed" | "fenced" | string> {
  let expected = "";
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      if ((await pushResult(context.top, context.gitRemote, id, commit, expected)) === "pushed")
        return "pushed";
    } catch (error) {
      if (attempt === 4) return messageOf(error);
      await new Promise((resolve) => setTimeout(resolve, 1_000 * (attempt + 1)));
      continue;
    }
    if (!(await holdsClaim(context.claims, id, token).catch(() => false))) return "fenced";
    expected = await remoteRef(context.top, context.gitRemote, resultRefName(id)).catch(() => expected);
  }
  return `The remote kept refusing ${resultRefName(id)}.`;
}
