import { settleRace } from "../../engine/race/race.js";
import { controlPaths } from "../../engine/store/control.js";
import type { EventWriter } from "../../engine/store/event-log.js";
import type { TaskPlan } from "../../engine/store/task-plan.js";
import { readState, updateState } from "../../engine/store/task-store.js";
import { settleBudget } from "../../policy/budget.js";
import type { Finding } from "../../protocol/report.js";
import { isErrorCode } from "../../support/error-catalogue.js";
import { messageOf } from "../../support/errors.js";
import { gitOut } from "../../workspace/git.js";
import { fetchResultCommit } from "../../workspace/result-ref.js";
import type { Cluster } from "../connection.js";
import { deleteStart } from "../git-refs.js";
import { settleClusterBudget } from "../ledger.js";
import type { Claim } from "../wire.js";
import { finishHere } from "./finish-here.js";

export interface WorkerFinishInput {
  dir: string;
  plan: TaskPlan;
  claim: Claim;
  events: EventWriter;
  cluster: Cluster;
  log: (line: string) => void;
}

/**
 * Write a remote task's final state here from its claim's final: fetch the result commit (so `caesar
 * diff` and `apply` work from now on without the network, and the commit is checked against the tree the
 * worker reported), write the one `finished` event, then the final state; settle the tree's budget.
 * A task whose agent never ran on its worker (no report) is ended by the engine's own end of a task,
 * with the worker's reason as its error.
 */
export async function finishFromWorker(input: WorkerFinishInput): Promise<void> {
  const { dir, plan, claim, events } = input;
  const final = claim.final!;
  const before = await readState(dir);
  if (before.phase === "finished" || !before.remote) return;
  const remote = before.remote;
  const top = plan.repo_top ?? plan.root;
  const findings: Finding[] = [];
  if (final.result_commit) {
    try {
      await fetchResultCommit(top, remote.git_remote, before.id, final.result_commit);
      const tree = await gitOut(top, ["rev-parse", `${final.result_commit}^{tree}`]);
      if (final.end_tree && tree !== final.end_tree) {
        findings.push({
          severity: "high",
          title: "The result commit does not hold the tree the worker reported",
          detail: `refs/caesar/tasks/${before.id} (${final.result_commit}) has tree ${tree}, the worker reported ${final.end_tree}.`,
        });
      }
    } catch (error) {
      // Kept as it is: `caesar diff`/`apply` fetch it again, and say why when they cannot.
      input.log(`[relay] ${before.id}: could not fetch its result yet: ${messageOf(error)}`);
    }
  }
  const remoteFields = {
    worker: { id: claim.worker.id, host: claim.worker.host },
    attempt: claim.attempt,
    lost: claim.lost,
    attempts: claim.history,
  };
  if (final.report === null) {
    await finishHere(
      dir,
      plan,
      // The worker's code, when this caesar knows it (a worker of another version may send one it does not).
      {
        code: isErrorCode(final.error?.code) ? final.error.code : "remote_failed",
        message: final.error?.message ?? `The task failed on worker ${claim.worker.id}.`,
      },
      final.outcome,
      events,
    );
    await updateState(dir, (state) => ({
      ...state,
      started_at: final.started_at,
      remote: state.remote ? { ...state.remote, ...remoteFields } : state.remote,
    }));
  } else {
    const report = { ...final.report, findings: [...final.report.findings, ...findings] };
    // Recorded before it is appended, as finishTask does: readers tell caesar's `finished` by this record.
    const at = new Date().toISOString();
    const seq = await events.nextSequence();
    await updateState(dir, (state) => ({ ...state, final_events: { seq, at } }));
    await events.append(
      {
        type: "finished",
        status: report.status,
        summary: report.summary,
        outcome: final.outcome,
        by: "caesar",
      },
      at,
    );
    await events.flush();
    await updateState(dir, (state) => ({
      ...state,
      phase: "finished",
      finished_at: final.finished_at,
      outcome: final.outcome,
      exit: final.exit,
      report_status: report.status,
      report,
      error: final.error ?? state.error,
      started_at: final.started_at,
      deadline_at: final.deadline_at,
      command: final.command,
      base_ref: final.base_ref ?? state.base_ref,
      start_tree: final.start_tree ?? state.start_tree,
      end_tree: final.end_tree,
      result_commit: final.result_commit,
      waiting_for_slot: null,
      remote: state.remote ? { ...state.remote, ...remoteFields } : state.remote,
    }));
  }
  await settleClusterBudget(
    input.cluster,
    remote.queue,
    plan.budget.tree ?? before.id,
    before.id,
    final.started_at !== null,
    final.report?.usage.cost_usd ?? 0,
  ).catch((error) => input.log(`[relay] ${before.id}: budget not settled: ${messageOf(error)}`));
  // A tree rooted in a task that runs here counts in this project's ledger (cluster/ledger.ts).
  await settleBudget(
    controlPaths(plan.root).budgets,
    plan.budget.tree ?? before.id,
    before.id,
    final.started_at !== null,
    final.report?.usage.cost_usd ?? 0,
  ).catch(() => undefined);
  // The result commit keeps the starting point's objects alive on the remote: its own ref can go.
  await deleteStart(top, remote.git_remote, before.id).catch(() => undefined);
  // A race's contender is settled here, where its race's record is (a local contender's conductor does it).
  if (plan.race) {
    const race = plan.race;
    await settleRace(plan.root, race, await readState(dir)).catch((error) =>
      input.log(`[relay] ${before.id}: race ${race.id} not settled: ${messageOf(error)}`),
    );
  }
}
