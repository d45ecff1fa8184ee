import { CaesarError } from "../../support/errors.js";
import { hasSeparateResult } from "../store/state.js";
import type { TaskRecord } from "../store/task-store.js";
import { updateState } from "../store/task-store.js";
import { readPlan } from "./live-task.js";
import { applyResult, taskResult } from "./result.js";

export interface AppliedTask {
  id: string;
  files: string[];
  head: string;
  /** The git work tree the change was staged in. */
  top: string;
}

/**
 * Bring a finished worktree task's verified change into the main working tree (three-way merge, staged),
 * and record it in state.json. Refuses — changing nothing — while the task runs, for in-place tasks,
 * for a task already applied (unless `force`), and whenever `applyResult` refuses.
 */
export async function applyTask(
  record: TaskRecord,
  options: { by: string; force?: boolean },
): Promise<AppliedTask> {
  const { state } = record;
  if (state.phase !== "finished") {
    throw new CaesarError("task_running", `Task ${record.id} is still ${state.phase}.`, {
      detail: `Wait for it to finish (caesar logs ${record.id} --follow), or cancel it first.`,
    });
  }
  if (!hasSeparateResult(state)) {
    throw new CaesarError(
      "apply_inplace",
      `Task ${record.id} ran in place: its changes are already in your working tree.`,
      { detail: `See them with \`caesar diff ${record.id}\`.` },
    );
  }
  if (state.applied && options.force !== true) {
    throw new CaesarError("already_applied", `Task ${record.id} was already applied (${state.applied.at}).`, {
      detail: "Pass --force to apply it again.",
    });
  }
  const plan = await readPlan(record.dir);
  const top = plan?.repo_top ?? state.root;
  const result = await taskResult(state, top);
  const applied = await applyResult(state, top, result);
  await updateState(record.dir, (current) => ({
    ...current,
    applied: { at: new Date().toISOString(), by: options.by, head: applied.head, files: applied.files },
  }));
  return { id: record.id, files: applied.files, head: applied.head, top };
}
