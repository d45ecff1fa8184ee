import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { concludeIfAbandoned } from "./conclude.js";
import { PLAN_FILE } from "./conductor.js";
import { type TaskPlan, TaskPlanSchema } from "./plan.js";
import { loadTask, type TaskRecord } from "./task-store.js";

/**
 * Load a task by (a prefix of) its id, concluding it first if its conductor is proven dead. Every front
 * end (CLI, MCP, HTTP) reads tasks through this, so none of them shows a dead task as running.
 */
export async function loadLiveTask(root: string, typed: string, by: string): Promise<TaskRecord> {
  const record = await loadTask(root, typed);
  const state = await concludeIfAbandoned(record, by);
  return { ...record, state };
}

/** The plan a task was started with (plan.json), or undefined when it cannot be read. */
export async function readPlan(dir: string): Promise<TaskPlan | undefined> {
  try {
    return TaskPlanSchema.parse(JSON.parse(await readFile(join(dir, PLAN_FILE), "utf8")));
  } catch {
    return undefined;
  }
}
