import type { TaskPlan } from "../store/task-plan.js";
import { updateState } from "../store/task-store.js";
import type { TakeSlot } from "./conductor.js";
import type { TaskTrace } from "./task-trace.js";

/**
 * Take the task's slot: while it waits, its state names the holders; once it has one (or was cancelled
 * waiting: undefined), a `caesar.slot_wait` span says how long it took.
 */
export async function takeTaskSlot(
  takeSlot: TakeSlot,
  input: { taskId: string; plan: TaskPlan; max: number; dir: string; signal: AbortSignal; spans: TaskTrace },
): Promise<(() => void) | undefined> {
  const start = Date.now();
  let waited = false;
  const release = await takeSlot(
    input.taskId,
    input.plan,
    input.max,
    (holders) => {
      waited = true;
      return updateState(input.dir, (state) => ({ ...state, waiting_for_slot: holders })).then(
        () => undefined,
      );
    },
    input.signal,
  ).catch((error: unknown) => {
    if (input.signal.aborted) return undefined;
    throw error;
  });
  input.spans.record("caesar.slot_wait", start, Date.now(), {
    "caesar.slot.waited": waited,
    "caesar.slot.max_parallel": input.max,
  });
  return release;
}
