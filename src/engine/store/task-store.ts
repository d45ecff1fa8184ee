import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseDocument } from "../../protocol/documents.js";
import { assertTaskId, isValidTaskId } from "../../protocol/ids.js";
import type { Task } from "../../protocol/task.js";
import { type TaskPaths, taskPaths } from "../../protocol/task-dir.js";
import { writeJsonAtomic } from "../../support/atomic-file.js";
import { CaesarError, errnoOf, UsageError } from "../../support/errors.js";
import { withFileLock } from "../../support/file-lock.js";
import { projectPaths } from "./project.js";
import { type TaskState, TaskStateSchema } from "./state.js";

export interface TaskRecord {
  id: string;
  dir: string;
  paths: TaskPaths;
  state: TaskState;
}

export function taskDirOf(root: string, id: string): string {
  return join(projectPaths(root).tasks, assertTaskId(id));
}

/** Ids of every task directory in the store (unsorted; invalid names are ignored). */
export async function listTaskIds(root: string): Promise<string[]> {
  try {
    const entries = await readdir(projectPaths(root).tasks, { withFileTypes: true });
    return entries
      .filter((entry) => entry.isDirectory() && isValidTaskId(entry.name))
      .map((entry) => entry.name);
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return [];
    throw error;
  }
}

/**
 * Resolve what a user typed to a task id: the exact id, or a unique prefix of one (with or without `t_`),
 * the way git accepts short SHAs.
 */
export async function resolveTaskId(root: string, typed: string): Promise<string> {
  assertTaskId(typed);
  const ids = await listTaskIds(root);
  if (ids.includes(typed)) return typed;
  const matches = ids.filter((id) => id.startsWith(typed) || id.startsWith(`t_${typed}`));
  if (matches.length === 1) return matches[0]!;
  if (matches.length === 0) {
    throw new CaesarError("task_not_found", `No task ${typed} in ${projectPaths(root).tasks}.`, {
      detail: "List tasks with `caesar ps --all`, or pass --root to select another project.",
    });
  }
  throw new UsageError(
    "ambiguous_task_id",
    `${typed} matches ${matches.length} tasks: ${matches.slice(0, 5).join(", ")}.`,
    {
      detail: "Type more characters of the id.",
    },
  );
}

export async function readState(dir: string): Promise<TaskState> {
  const path = taskPaths(dir).state;
  let raw: string;
  try {
    raw = await readFile(path, "utf8");
  } catch (error) {
    throw new CaesarError("task_state_missing", `Cannot read ${path}.`, {
      detail: `${(error as Error).message}. The task directory is incomplete; \`caesar gc\` can clean it up.`,
      cause: error,
    });
  }
  const parsed = TaskStateSchema.safeParse(safeJson(raw));
  if (!parsed.success) {
    throw new CaesarError("task_state_invalid", `${path} is not a valid task state.`, {
      detail: parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("\n"),
    });
  }
  return parsed.data;
}

function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

export async function writeState(dir: string, state: TaskState): Promise<void> {
  await writeJsonAtomic(taskPaths(dir).state, { ...state, updated_at: new Date().toISOString() });
}

/** Read-modify-write state.json under the task's lock, so two writers never lose each other's update. */
export async function updateState(
  dir: string,
  mutate: (state: TaskState) => TaskState | undefined,
): Promise<TaskState> {
  return withFileLock(join(dir, ".state.lock"), async () => {
    const current = await readState(dir);
    const next = mutate(current);
    if (next === undefined) return current;
    await writeState(dir, next);
    return next;
  });
}

export async function readTaskFile(dir: string): Promise<Task | undefined> {
  try {
    const raw = JSON.parse(await readFile(taskPaths(dir).task, "utf8"));
    return parseDocument("task", raw, "task.json");
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return undefined;
    throw error;
  }
}

export async function loadTask(root: string, typedId: string): Promise<TaskRecord> {
  const id = await resolveTaskId(root, typedId);
  const dir = taskDirOf(root, id);
  return { id, dir, paths: taskPaths(dir), state: await readState(dir) };
}

/** Every task whose state reads, newest first; unreadable directories are skipped, not fatal. */
export async function loadAllTasks(root: string): Promise<TaskRecord[]> {
  const ids = await listTaskIds(root);
  const records = await Promise.all(
    ids.map(async (id) => {
      const dir = taskDirOf(root, id);
      try {
        return { id, dir, paths: taskPaths(dir), state: await readState(dir) };
      } catch {
        return undefined;
      }
    }),
  );
  return records
    .filter((record): record is TaskRecord => record !== undefined)
    .sort((a, b) => b.state.created_at.localeCompare(a.state.created_at));
}
