import { join } from "node:path";
import { taskPaths } from "../../protocol/task-dir.js";
import { type CaesarError, isCaesarError, messageOf } from "../../support/errors.js";
import { withLock } from "../../support/lock.js";
import { tailOf } from "../../support/output-tail.js";
import { isProcessAlive } from "../../support/process.js";
import { describeEnding, type EndingCause } from "../conductor/ending.js";
import { finishTask } from "../conductor/finish.js";
import { terminateGroup } from "../conductor/terminate.js";
import { EventWriter } from "../store/event-log.js";
import type { Outcome, TaskState } from "../store/state.js";
import { readTaskTail } from "../store/task-files.js";
import { loadPlan } from "../store/task-plan.js";
import { isVerifiedTask, readState, type TaskRecord, updateState } from "../store/task-store.js";
import { isAbandoned } from "./recover.js";

// The end of tasks no conductor can go on with. Apart from recover.ts (a reader's step, loaded by every front
// end), as it loads the whole end of a task (report, checks, reconciliation) that a reader rarely needs.

/**
 * Finish an unfinished task no conductor can take over (a worker's run in its own clone, or a task
 * without caesar's record): stop its agent if caesar recorded it and it still runs, observe what it
 * changed, and write a failed final state saying so.
 */
export async function finishAbandoned(
  record: TaskRecord,
  by: string,
  outcome: Outcome = "failed",
): Promise<TaskState> {
  if (!isAbandoned(record.state)) return record.state;
  return finishStranded(
    record.dir,
    (state) => isAbandoned(state),
    (state, agentStopped) => ({
      kind: "abandoned",
      by,
      conductorPid: state.conductor?.pid ?? null,
      agentPid: state.agent_process?.pid ?? null,
      agentStopped,
      cancelled: state.cancel_requested !== null || outcome === "cancelled",
    }),
  );
}

/**
 * Finish a task its conductor could not go on with for a fault of the machine (a full disk): what it still
 * runs is stopped, and it is finished failed with the fault's code and words — the whole end of a task
 * (report, `finished` event, final state). Throws while the fault lasts (the caller tries again later).
 */
export async function finishAfterFault(dir: string, fault: CaesarError): Promise<TaskState> {
  return finishStranded(
    dir,
    (state) => state.phase !== "finished",
    (state) => ({ kind: "crashed", error: fault, agentRan: state.started_at !== null }),
  );
}

/**
 * The end of a task no conductor goes on with, under its conclusion lock: if `unfinished` still holds, what
 * it runs is stopped and the whole end of a task is written, its cause described from the state.
 */
async function finishStranded(
  dir: string,
  unfinished: (state: TaskState) => boolean,
  causeOf: (state: TaskState, agentStopped: boolean) => EndingCause,
): Promise<TaskState> {
  return withLock(join(dir, ".conclude.lock"), async () => {
    const state = await readState(dir);
    if (!unfinished(state)) return state;
    const agentStopped = await stopTaskProcesses(dir, state);
    const plan = await loadPlan(dir);
    const paths = taskPaths(dir);
    const ending = describeEnding(causeOf(state, agentStopped), {
      agent: plan.agent,
      command: state.command,
      timeoutMs: plan.timeout_ms,
      cancelledBy: state.cancel_requested?.by,
      outputTail: tailOf(await readTaskTail(paths.raw, 64 * 1024), 20),
    });
    return finishTask({ dir, plan, events: new EventWriter(paths.events, state.id), stream: {}, ending });
  });
}

/**
 * Stop what a task still runs — its agent, its check, its setup — when caesar recorded it (an unverified
 * task's files could name any process). Returns whether its agent still ran and was stopped.
 */
async function stopTaskProcesses(dir: string, state: TaskState): Promise<boolean> {
  const agentStopped =
    state.agent_process !== null && isVerifiedTask(dir) && isProcessAlive(state.agent_process);
  if (agentStopped) await terminateGroup(state.agent_process!.pid);
  for (const group of [state.check_process, state.setup_process])
    if (group && isVerifiedTask(dir) && isProcessAlive(group)) await terminateGroup(group.pid);
  return agentStopped;
}

/** The `at` of `final_events` when caesar wrote no events of its own at the end: no event carries it. */
const NO_FINISHED_EVENT = "none";

/**
 * The last resort for a task its conductor could not go on with (its records unreadable, say): a failed
 * final state saying why, when nothing more can be done (no report, no event).
 */
export async function finishUnconducted(dir: string, error: unknown): Promise<void> {
  await updateState(dir, (state) =>
    state.phase === "finished"
      ? undefined
      : {
          ...state,
          phase: "finished",
          outcome: "failed",
          finished_at: new Date().toISOString(),
          // caesar wrote no `finished` of its own: any in events.jsonl is the agent's.
          final_events: { seq: 0, at: NO_FINISHED_EVENT },
          error: {
            code: isCaesarError(error) ? error.code : "conductor_error",
            message: `The conductor service could not conduct the task: ${messageOf(error)}`,
          },
        },
  );
}
