import { join } from "node:path";
import { taskPaths } from "../../protocol/task-dir.js";
import { withFileLock } from "../../support/file-lock.js";
import { isProcessAlive } from "../../support/process.js";
import { finishTask } from "../conductor/finish.js";
import { terminateGroup } from "../conductor/terminate.js";
import { EventWriter } from "../store/event-log.js";
import type { Outcome, TaskState } from "../store/state.js";
import { loadPlan } from "../store/task-plan.js";
import { isVerifiedTask, readState, type TaskRecord } from "../store/task-store.js";

/** A queued task whose conductor never recorded itself is abandoned after this long. */
const UNCLAIMED_AFTER_MS = 60_000;

/** Is this task's conductor proven gone while the task is not finished? */
export function isAbandoned(state: TaskState, now = Date.now()): boolean {
  if (state.phase === "finished") return false;
  if (state.conductor) return !isProcessAlive(state.conductor);
  return now - Date.parse(state.created_at) > UNCLAIMED_AFTER_MS;
}

/**
 * Conclude a task whose conductor died (a positive proof: its recorded pid no longer exists): stop its
 * agent if that still runs, observe what it changed, and write a failed final state saying so. Any command
 * that reads tasks (`ps`, `status`, `gc`…) does this, so no task stays "running" forever.
 */
export async function concludeIfAbandoned(
  record: TaskRecord,
  by: string,
  outcome: Outcome = "failed",
): Promise<TaskState> {
  if (!isAbandoned(record.state)) return record.state;
  return withFileLock(join(record.dir, ".conclude.lock"), async () => {
    const state = await readState(record.dir);
    if (!isAbandoned(state)) return state;
    // Only a process group caesar itself recorded is ever ended (an unverified task's files could name any).
    if (state.agent_process && isVerifiedTask(record.dir) && isProcessAlive(state.agent_process))
      await terminateGroup(state.agent_process.pid);
    const plan = await loadPlan(record.dir);
    const who = state.conductor
      ? `its conductor (pid ${state.conductor.pid}) is gone`
      : "no conductor ever took it";
    return finishTask({
      dir: record.dir,
      plan,
      events: new EventWriter(taskPaths(record.dir).events, record.id),
      stream: {},
      outcome: state.cancel_requested ? "cancelled" : outcome,
      diedWhileFinishing: state.phase === "finishing",
      exit: { code: null, signal: null },
      launchError: {
        code: "conductor_died",
        message: `The task was concluded by \`caesar ${by}\`: ${who}${state.agent_process ? `; its agent (pid ${state.agent_process.pid}) was stopped` : ""}.`,
      },
    });
  });
}
