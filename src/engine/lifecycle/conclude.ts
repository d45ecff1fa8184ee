import { join } from "node:path";
import { taskPaths } from "../../protocol/task-dir.js";
import { withFileLock } from "../../support/file-lock.js";
import { readFileTail, tailOf } from "../../support/output-tail.js";
import { isProcessAlive } from "../../support/process.js";
import { describeEnding } from "../conductor/ending.js";
import { finishTask } from "../conductor/finish.js";
import { ensureRelay } from "../conductor/relay.js";
import { terminateGroup } from "../conductor/terminate.js";
import { EventWriter } from "../store/event-log.js";
import type { Outcome, TaskState } from "../store/state.js";
import { loadPlan } from "../store/task-plan.js";
import { isVerifiedTask, readState, type TaskRecord } from "../store/task-store.js";

/** A queued task whose conductor never recorded itself is abandoned after this long. */
const UNCLAIMED_AFTER_MS = 60_000;

/**
 * Is this task's conductor proven gone while the task is not finished? Never for a remote task: it lives
 * on in the cluster whatever happens here (a worker lost is the cluster's to handle), and its relay is
 * started again instead (see concludeIfAbandoned).
 */
export function isAbandoned(state: TaskState, now = Date.now()): boolean {
  if (state.phase === "finished" || state.remote) return false;
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
  if (record.state.remote && record.state.phase !== "finished") {
    ensureRelay(record.state.root);
    return record.state;
  }
  if (!isAbandoned(record.state)) return record.state;
  return withFileLock(join(record.dir, ".conclude.lock"), async () => {
    const state = await readState(record.dir);
    if (!isAbandoned(state)) return state;
    // Only a process group caesar itself recorded is ever ended (an unverified task's files could name any).
    if (state.agent_process && isVerifiedTask(record.dir) && isProcessAlive(state.agent_process))
      await terminateGroup(state.agent_process.pid);
    if (state.check_process && isProcessAlive(state.check_process))
      await terminateGroup(state.check_process.pid);
    const plan = await loadPlan(record.dir);
    const paths = taskPaths(record.dir);
    const ending = describeEnding(
      {
        kind: "abandoned",
        by,
        conductorPid: state.conductor?.pid ?? null,
        agentPid: state.agent_process?.pid ?? null,
        cancelled: state.cancel_requested !== null || outcome === "cancelled",
      },
      {
        agent: plan.agent,
        command: state.command,
        timeoutMs: plan.timeout_ms,
        cancelledBy: state.cancel_requested?.by,
        outputTail: tailOf(await readFileTail(paths.raw, 64 * 1024), 20),
      },
    );
    return finishTask({
      dir: record.dir,
      plan,
      events: new EventWriter(paths.events, record.id),
      stream: {},
      ending,
      diedWhileFinishing: state.phase === "finishing",
    });
  });
}
