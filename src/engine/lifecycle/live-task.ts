import { loadTask, type TaskRecord } from "../store/task-store.js";
import { concludeIfAbandoned } from "./conclude.js";

/**
 * Load a task by (a prefix of) its id, concluding it first if its conductor is proven dead. Every front
 * end (CLI, MCP, HTTP) reads tasks through this, so none of them shows a dead task as running.
 */
export async function loadLiveTask(root: string, typed: string, by: string): Promise<TaskRecord> {
  const record = await loadTask(root, typed);
  const state = await concludeIfAbandoned(record, by);
  return { ...record, state };
}

export { readPlan } from "../store/task-plan.js";
