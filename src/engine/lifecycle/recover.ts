import { isProcessAlive } from "../../support/process.js";
import { ensureRelay } from "../conductor/relay.js";
import { askService } from "../conductor/service-client.js";
import type { TaskState } from "../store/state.js";
import { loadPlan } from "../store/task-plan.js";
import { isVerifiedTask, readState, type TaskRecord } from "../store/task-store.js";

/**
 * Is this task unfinished and conducted by no live process — never claimed, or its conductor gone? Never
 * for a remote task: it lives on in the cluster whatever happens here (a worker lost is the cluster's to
 * handle), and its relay is started again instead (see recoverTask).
 */
export function needsConductor(state: TaskState): boolean {
  if (state.phase === "finished" || state.remote) return false;
  return state.conductor === null || !isProcessAlive(state.conductor);
}

/** A task no conductor ever claimed is finished (when no service can take it) only after this long. */
const UNCLAIMED_AFTER_MS = 60_000;

/** Proven abandoned: its conductor is gone, or none claimed it for a minute (it may be being created). */
export function isAbandoned(state: TaskState, now = Date.now()): boolean {
  if (!needsConductor(state)) return false;
  return state.conductor !== null || now - Date.parse(state.created_at) > UNCLAIMED_AFTER_MS;
}

/**
 * The one recovery step every reader (`ps`, `status`, `logs --follow`, `await`, `gc`, `cancel`, the server's
 * index, the MCP tools) runs on a task before showing it — so no task stays "running" forever, and no
 * reader ever finishes a task itself:
 * - a remote task whose relay is gone gets its relay started again;
 * - a local task that no live process conducts (its conductor was killed, or no one told a service about
 *   it) is handed to the project's conductor service, started if need be, which takes its agent over
 *   where it stands (or finishes it, when nothing can be taken over);
 * - a task a cluster worker ran in this clone, or one without caesar's record, is finished here as
 *   failed, as no service conducts it.
 * Returns the task's state as it is after that.
 */
export async function recoverTask(record: TaskRecord, by: string): Promise<TaskState> {
  try {
    if (record.state.remote && record.state.phase !== "finished") {
      ensureRelay(record.state.root);
      return record.state;
    }
    if (!needsConductor(record.state)) return record.state;
    // A task whose plan cannot be read goes to the service too, which finishes it saying why.
    const plan = await loadPlan(record.dir).catch(() => undefined);
    if (!plan?.remote && isVerifiedTask(record.dir)) {
      await askService(record.state.root, { op: "conduct", task: record.id });
      return await readState(record.dir);
    }
    const { finishAbandoned } = await import("./finish-stranded.js");
    return await finishAbandoned(record, by);
  } catch {
    // Reads are reads: a task that cannot be recovered now is shown as it is, never fatal to the reader.
    return record.state;
  }
}
