import { isProcessAlive } from "../../support/process.js";
import type { TaskPlan } from "../store/task-plan.js";
import { readState, taskDirOf } from "../store/task-store.js";
import type { SlotLending } from "./slots.js";

/** A sub-task may run in its parent's slot while the parent runs (see `SlotLending`). */
export function lendingOf(root: string, plan: TaskPlan): SlotLending | undefined {
  const parentId = plan.parent_id;
  if (parentId === null) return undefined;
  return {
    parentId,
    parentRuns: async () => {
      try {
        const parent = await readState(taskDirOf(root, parentId));
        return (
          parent.phase !== "queued" &&
          parent.phase !== "finished" &&
          parent.conductor !== null &&
          isProcessAlive(parent.conductor)
        );
      } catch {
        return false;
      }
    },
  };
}
