import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { concludeIfAbandoned } from "../engine/conclude.js";
import { PLAN_FILE } from "../engine/conductor.js";
import { type TaskPlan, TaskPlanSchema } from "../engine/plan.js";
import { loadTask, type TaskRecord } from "../engine/task-store.js";

/** Load a task by (a prefix of) its id, concluding it first if its conductor is proven dead. */
export async function loadLiveTask(root: string, typed: string, by: string): Promise<TaskRecord> {
  const record = await loadTask(root, typed);
  const state = await concludeIfAbandoned(record, by);
  return { ...record, state };
}

export async function readPlan(dir: string): Promise<TaskPlan | undefined> {
  try {
    return TaskPlanSchema.parse(JSON.parse(await readFile(join(dir, PLAN_FILE), "utf8")));
  } catch {
    return undefined;
  }
}
