import { finishTask } from "../../engine/conductor/finish.js";
import { EventWriter } from "../../engine/store/event-log.js";
import type { Outcome, TaskState } from "../../engine/store/state.js";
import type { TaskPlan } from "../../engine/store/task-plan.js";
import { readState } from "../../engine/store/task-store.js";
import { taskPaths } from "../../protocol/task-dir.js";

/**
 * End a remote task on this machine with the engine's own end of a task (a report synthesised from the
 * outcome, the `error` and `finished` events, the final state): when its starting point could not be
 * pushed, when it was cancelled before any worker took it, or when its workers gave it up.
 */
export async function concludeHere(
  dir: string,
  plan: TaskPlan,
  error: { code: string; message: string },
  outcome: Outcome = "failed",
  events?: EventWriter,
): Promise<TaskState> {
  const state = await readState(dir);
  if (state.phase === "finished") return state;
  return finishTask({
    dir,
    plan,
    events: events ?? new EventWriter(taskPaths(dir).events, state.id),
    stream: {},
    outcome,
    exit: { code: null, signal: null },
    launchError: error,
  });
}
