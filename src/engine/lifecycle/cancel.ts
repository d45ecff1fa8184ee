import { taskPaths } from "../../protocol/task-dir.js";
import { CaesarError } from "../../support/errors.js";
import { isProcessAlive } from "../../support/process.js";
import { describeEnding } from "../conductor/ending.js";
import { finishTask } from "../conductor/finish.js";
import { ensureRelay } from "../conductor/relay.js";
import { askRunningService } from "../conductor/service-client.js";
import { readServiceInfo } from "../conductor/service-files.js";
import { KILL_GRACE_MS } from "../conductor/terminate.js";
import { waitForChange } from "../store/change-watch.js";
import { EventWriter } from "../store/event-log.js";
import type { TaskState } from "../store/state.js";
import { loadPlan } from "../store/task-plan.js";
import { isVerifiedTask, readState, type TaskRecord, taskDirOf, updateState } from "../store/task-store.js";
import { type Caller, governed, identifyCaller } from "./caller.js";
import { finishAbandoned } from "./finish-stranded.js";
import { needsConductor, recoverTask } from "./recover.js";
import { assertWithinSubtree, descendantsOf } from "./subtree.js";

export interface CancelOutcome {
  state: TaskState;
  changed: boolean;
  /** Its bounded descendants, cancelled with it (independent ones, and their sub-tasks, keep running). */
  cascaded: { id: string; changed: boolean; phase: TaskState["phase"]; outcome: TaskState["outcome"] }[];
}

/** How long a cancel waits for the conductor (or the cluster) to confirm it with a final state. */
const CONFIRM_MS = KILL_GRACE_MS + 55_000;

/**
 * Cancel a task and its bounded descendants: record the request, then ask each conductor to stop
 * (SIGTERM); a conductor ends its agent's whole process group and writes the final state. A task whose
 * conductor is gone is finished here. A finished task stays as it was. An independent descendant — a
 * tree of its own — keeps running, and so do its sub-tasks. From inside a task, only its own subtree
 * may be cancelled. A remote task's relay sees the request and carries it to its worker.
 */
export async function cancelTask(
  record: TaskRecord,
  by: string,
  options: { caller?: Caller } = {},
): Promise<CancelOutcome> {
  const root = (await readState(record.dir)).root;
  const action = `cancel ${record.id}`;
  const caller = options.caller ?? (await identifyCaller(root, { action }));
  return governed(caller, action, async () => {
    await assertWithinSubtree(caller, record.id, "cancel");
    const own = await cancelOne(record.dir, by);
    return { ...own, cascaded: await cancelDescendants(root, record.id, by) };
  });
}

/**
 * Cancel a task's bounded descendants, the task itself being stopped by whoever runs it: a cluster
 * worker whose remote task is cancelled stops it in its own process, and its sub-tasks with this.
 */
export async function cancelDescendants(
  root: string,
  id: string,
  by: string,
): Promise<CancelOutcome["cascaded"]> {
  const descendants = await descendantsOf(root, id, { boundedOnly: true });
  return Promise.all(
    descendants.map(async (descendant) => {
      const dir = taskDirOf(root, descendant.id);
      const state = await readState(dir);
      // Already being cancelled (a second pass), or conducted by this very process (a cluster worker
      // that took its own task's child: that run hears its cancel through the cluster): nothing to do.
      if (state.cancel_requested || state.conductor?.pid === process.pid)
        return { id: descendant.id, changed: false, phase: state.phase, outcome: state.outcome };
      const result = await cancelOne(dir, `${by}, with its ancestor ${id}`);
      return {
        id: descendant.id,
        changed: result.changed,
        phase: result.state.phase,
        outcome: result.state.outcome,
      };
    }),
  );
}

async function cancelOne(dir: string, by: string): Promise<{ state: TaskState; changed: boolean }> {
  let state = await updateState(dir, (current) =>
    current.phase === "finished" || current.cancel_requested
      ? undefined
      : { ...current, cancel_requested: { at: new Date().toISOString(), by } },
  );
  if (state.phase === "finished") return { state, changed: false };
  if (state.remote) return { state: await cancelRemote(dir, by), changed: true };
  const conductor = state.conductor;
  // A task conducted inside this process (a cluster worker's) is stopped by its own signal, never by
  // signalling ourselves.
  if (conductor && conductor.pid !== process.pid && isProcessAlive(conductor)) {
    // Only a pid caesar itself recorded is ever signalled: an unverified task's files could name any process.
    if (!isVerifiedTask(dir)) throw unverified(state.id, dir);
    // The project's service stops the task at once when told (and sees the recorded cancel on its next look
    // anyway); any other conductor — a service stopping after its tasks — is asked with SIGTERM to stop now,
    // and the service that takes its agent over finds the cancel.
    const service = readServiceInfo(state.root);
    if (service?.pid === conductor.pid) await askRunningService(state.root, { op: "cancel", task: state.id });
    else {
      try {
        process.kill(conductor.pid, "SIGTERM");
      } catch {
        // it just ended
      }
    }
  }
  const deadline = Date.now() + CONFIRM_MS;
  while (Date.now() < deadline) {
    state = await readState(dir);
    if (state.phase === "finished") return { state, changed: true };
    // Its conductor is gone (killed, or it never had one): the task goes to the service, which cancels it.
    if (needsConductor(state))
      state = await recoverTask({ id: state.id, dir, paths: taskPaths(dir), state }, "cancel");
    if (state.phase === "finished") return { state, changed: true };
    await waitForChange(dir, 250);
  }
  // Nothing answered in time (no service could be started): finished here, as cancelled.
  const current = { id: state.id, dir, paths: taskPaths(dir), state: await readState(dir) };
  state = await finishAbandoned(current, "cancel", "cancelled");
  return { state, changed: true };
}

/**
 * A remote task's cancel goes through its relay (started if it is not running). When the cluster does not
 * confirm in time (its server unreachable), the task is finished here as cancelled, saying the worker
 * may not have heard: nothing stays "running" forever on this machine because a server went away.
 */
async function cancelRemote(dir: string, by: string): Promise<TaskState> {
  ensureRelay((await readState(dir)).root);
  const deadline = Date.now() + CONFIRM_MS;
  while (Date.now() < deadline) {
    const state = await readState(dir);
    if (state.phase === "finished") return state;
    await waitForChange(dir, 250);
  }
  const state = await readState(dir);
  if (state.phase === "finished") return state;
  const where = state.remote?.worker ? `worker ${state.remote.worker.id}` : "the cluster's queue";
  const plan = await loadPlan(dir);
  const ending = describeEnding(
    {
      kind: "remote",
      code: "cancel_unconfirmed",
      message: `Cancelled by \`caesar ${by === "cli" ? "cancel" : by}\`, but the cluster (${state.remote?.servers ?? "?"}) did not confirm it within ${Math.round(CONFIRM_MS / 1000)} s: ${where} may still run the task until it hears of the cancel.`,
      outcome: "cancelled",
      agentRan: state.started_at !== null,
    },
    { agent: plan.agent, timeoutMs: plan.timeout_ms, cancelledBy: by, outputTail: "" },
  );
  return finishTask({
    dir,
    plan,
    events: new EventWriter(taskPaths(dir).events, state.id),
    stream: {},
    ending,
  });
}

function unverified(id: string, dir: string): CaesarError {
  return new CaesarError(
    "task_unverified",
    `Task ${id} has no record in caesar's control directory: caesar will not signal the processes its task directory names.`,
    {
      detail: `It was made by an older caesar, or not by caesar (${dir}). Stop its processes by hand if they are yours.`,
    },
  );
}
