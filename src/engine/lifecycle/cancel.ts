import { isProcessAlive } from "../../support/process.js";
import { finishTask } from "../conductor/finish.js";
import { ensureRelay } from "../conductor/relay.js";
import { KILL_GRACE_MS } from "../conductor/terminate.js";
import { waitForChange } from "../store/change-watch.js";
import { EventWriter } from "../store/event-log.js";
import type { TaskState } from "../store/state.js";
import { loadPlan } from "../store/task-plan.js";
import { readState, type TaskRecord, updateState } from "../store/task-store.js";
import { concludeIfAbandoned } from "./conclude.js";

/** How long a cancel waits for the conductor (or the cluster) to confirm it with a final state. */
const CONFIRM_MS = KILL_GRACE_MS + 15_000;

/**
 * Cancel a task: record the request, then ask its conductor to stop (SIGTERM); the conductor ends the
 * agent's whole process group and writes the final state. A task whose conductor is gone is concluded
 * here. A remote task's relay sees the request and carries it to the worker. Resolves with the final
 * state. A finished task stays as it was.
 */
export async function cancelTask(
  record: TaskRecord,
  by: string,
): Promise<{ state: TaskState; changed: boolean }> {
  let state = await updateState(record.dir, (current) =>
    current.phase === "finished" || current.cancel_requested
      ? undefined
      : { ...current, cancel_requested: { at: new Date().toISOString(), by } },
  );
  if (state.phase === "finished") return { state, changed: false };
  if (state.remote) return { state: await cancelRemote(record, by), changed: true };
  const conductor = state.conductor;
  if (conductor && isProcessAlive(conductor)) {
    try {
      process.kill(conductor.pid, "SIGTERM");
    } catch {
      // it just ended
    }
    const deadline = Date.now() + CONFIRM_MS;
    while (Date.now() < deadline) {
      state = await readState(record.dir);
      if (state.phase === "finished") return { state, changed: true };
      if (!isProcessAlive(conductor)) break;
      await waitForChange(record.dir, 250);
    }
  }
  state = await concludeIfAbandoned({ ...record, state: await readState(record.dir) }, "cancel", "cancelled");
  return { state, changed: true };
}

/**
 * A remote task's cancel goes through its relay (started if it is not running). When the cluster does not
 * confirm in time (its server unreachable), the task is concluded here as cancelled, saying the worker
 * may not have heard: nothing stays "running" forever on this machine because a server went away.
 */
async function cancelRemote(record: TaskRecord, by: string): Promise<TaskState> {
  ensureRelay(record.state.root);
  const deadline = Date.now() + CONFIRM_MS;
  while (Date.now() < deadline) {
    const state = await readState(record.dir);
    if (state.phase === "finished") return state;
    await waitForChange(record.dir, 250);
  }
  const state = await readState(record.dir);
  if (state.phase === "finished") return state;
  const where = state.remote?.worker ? `worker ${state.remote.worker.id}` : "the cluster's queue";
  return finishTask({
    dir: record.dir,
    plan: await loadPlan(record.dir),
    events: new EventWriter(record.paths.events, record.id),
    stream: {},
    outcome: "cancelled",
    exit: { code: null, signal: null },
    launchError: {
      code: "cancel_unconfirmed",
      message: `Cancelled by \`caesar ${by === "cli" ? "cancel" : by}\`, but the cluster (${state.remote?.servers ?? "?"}) did not confirm it within ${Math.round(CONFIRM_MS / 1000)} s: ${where} may still run the task until it hears of the cancel.`,
    },
  });
}
