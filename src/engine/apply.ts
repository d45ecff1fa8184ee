import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { CaesarError } from "../support/errors.js";
import { PLAN_FILE } from "./conductor.js";
import { TaskPlanSchema } from "./plan.js";
import { applyResult, taskResult } from "./result.js";
import type { TaskState } from "./state.js";
import { type TaskRecord, updateState } from "./task-store.js";

export interface AppliedTask {
  state: TaskState;
  files: string[];
  head: string;
  /** The git work tree the change was staged in. */
  top: string;
}

/**
 * Apply a finished worktree task's change to the main working tree (three-way merge, staged) and record
 * it in state.json. Shared by `caesar apply` and the HTTP API: every refusal happens before anything is
 * written, and names what to do.
 */
export async function applyTask(
  record: TaskRecord,
  options: { force?: boolean; by: string },
): Promise<AppliedTask> {
  const state = record.state;
  if (state.phase !== "finished") {
    throw new CaesarError("task_running", `Task ${record.id} is still ${state.phase}.`, {
      detail: `Wait for it to finish (caesar logs ${record.id} --follow), or cancel it first.`,
    });
  }
  if (!state.worktree) {
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
  const top = (await readRepoTop(record.dir)) ?? state.root;
  const result = await taskResult(state, top);
  const applied = await applyResult(state, top, result);
  const next = await updateState(record.dir, (current) => ({
    ...current,
    applied: { at: new Date().toISOString(), by: options.by, head: applied.head, files: applied.files },
  }));
  return { state: next, files: applied.files, head: applied.head, top };
}

async function readRepoTop(dir: string): Promise<string | null | undefined> {
  try {
    return TaskPlanSchema.parse(JSON.parse(await readFile(join(dir, PLAN_FILE), "utf8"))).repo_top;
  } catch {
    return undefined;
  }
}
