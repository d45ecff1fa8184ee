import { describeEnding } from "../../engine/conductor/ending.js";
import { finishTask } from "../../engine/conductor/finish.js";
import { EventWriter } from "../../engine/store/event-log.js";
import type { Outcome, TaskState } from "../../engine/store/state.js";
import type { TaskPlan } from "../../engine/store/task-plan.js";
import { readState } from "../../engine/store/task-store.js";
import { taskPaths } from "../../protocol/task-dir.js";
import type { ErrorCode } from "../../support/errors.js";

/**
 * End a remote task on this machine with the engine's own end of a task (a report synthesised from the
 * ending, the `error` and `finished` events, the final state): when its starting point could not be
 * pushed, when it was cancelled before any worker took it, when its workers gave it up, or when a
 * cancel went unconfirmed.
 */
export async function finishHere(
  dir: string,
  plan: TaskPlan,
  error: { code: ErrorCode; message: string },
  outcome: Outcome = "failed",
  events?: EventWriter,
): Promise<TaskState> {
  const state = await readState(dir);
  if (state.phase === "finished") return state;
  const ending = describeEnding(
    { kind: "remote", ...error, outcome, agentRan: state.started_at !== null },
    {
      agent: plan.agent,
      timeoutMs: plan.timeout_ms,
      cancelledBy: state.cancel_requested?.by,
      outputTail: "",
    },
  );
  return finishTask({
    dir,
    plan,
    events: events ?? new EventWriter(taskPaths(dir).events, state.id),
    stream: {},
    ending,
  });
}
