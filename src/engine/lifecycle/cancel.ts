import { isProcessAlive } from "../../support/process.js";
import { KILL_GRACE_MS } from "../conductor/terminate.js";
import { waitForChange } from "../store/change-watch.js";
import type { TaskState } from "../store/state.js";
import { readState, type TaskRecord, updateState } from "../store/task-store.js";
import { concludeIfAbandoned } from "./conclude.js";

/**
 * Cancel a task: record the request, then ask its conductor to stop (SIGTERM); the conductor ends the
 * agent's whole process group and writes the final state. A task whose conductor is gone is concluded
 * here. Resolves with the final state. A finished task stays as it was.
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
  const conductor = state.conductor;
  if (conductor && isProcessAlive(conductor)) {
    try {
      process.kill(conductor.pid, "SIGTERM");
    } catch {
      // it just ended
    }
    const deadline = Date.now() + KILL_GRACE_MS + 15_000;
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
