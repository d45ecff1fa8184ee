import { loadTask, type TaskRecord } from "../store/task-store.js";
import { recoverTask } from "./recover.js";

/**
 * Load a task by (a prefix of) its id, after the recovery step (recover.ts): a task whose conductor died
 * is handed to the project's service first. Every front end (CLI, MCP, HTTP) reads tasks through this.
 */
export async function loadLiveTask(root: string, typed: string, by: string): Promise<TaskRecord> {
  const record = await loadTask(root, typed);
  const state = await recoverTask(record, by);
  return { ...record, state };
}

export { readPlan } from "../store/task-plan.js";
