import { existsSync, readFileSync, statSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { cancelReservations } from "../../policy/budget.js";
import { isValidTaskId } from "../../protocol/ids.js";
import { messageOf } from "../../support/errors.js";
import { controlPaths, controlTaskPaths } from "../store/control.js";
import { projectPaths } from "../store/project.js";
import { readState, taskDirOf } from "../store/task-store.js";

/**
 * A task that was never fully created: its directory (or its record's) exists, but no state — its front
 * end died between reserving its budget place, writing its plan and writing its state. Creation takes
 * milliseconds; one older than this is taken back by whoever finds it (`caesar gc`, the conductor service).
 */
export const INCOMPLETE_AFTER_MS = 2 * 60_000;

export interface IncompleteTask {
  id: string;
  /** How long ago its folders were made (the newer of the two). */
  ageMs: number;
  /** Old enough to be taken back. */
  abandoned: boolean;
}

/** The tasks of a project, in its task directory or its control directory, that have no state at all. */
export async function listIncompleteTasks(root: string, now = Date.now()): Promise<IncompleteTask[]> {
  const ids = new Set<string>();
  for (const folder of [projectPaths(root).tasks, controlPaths(root).tasks]) {
    for (const name of await readdir(folder).catch(() => [] as string[]))
      if (isValidTaskId(name)) ids.add(name);
  }
  const incomplete: IncompleteTask[] = [];
  for (const id of ids) {
    const dir = taskDirOf(root, id);
    const record = controlTaskPaths(root, id);
    if (existsSync(record.state) || existsSync(join(dir, "state.json"))) continue;
    const made = Math.max(mtimeOf(dir), mtimeOf(record.dir));
    incomplete.push({ id, ageMs: now - made, abandoned: now - made > INCOMPLETE_AFTER_MS });
  }
  return incomplete;
}

/**
 * Take back a task that was never fully created: its budget place (the tree its plan names, else its own),
 * its record and its directory. Nothing ran: no worktree, no agent.
 */
export async function rollBackIncomplete(root: string, id: string): Promise<void> {
  const record = controlTaskPaths(root, id);
  const tree = treeOf(record.plan) ?? id;
  await cancelReservations(controlPaths(root).budgets, tree, [id]).catch(() => undefined);
  await rm(record.dir, { recursive: true, force: true });
  await rm(taskDirOf(root, id), { recursive: true, force: true });
}

function treeOf(planPath: string): string | undefined {
  try {
    const plan = JSON.parse(readFileSync(planPath, "utf8")) as { budget?: { tree?: unknown } };
    return typeof plan.budget?.tree === "string" ? plan.budget.tree : undefined;
  } catch {
    return undefined;
  }
}

function mtimeOf(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

/** A task whose state exists but cannot be read (a truncated or corrupt record): shown, with why. */
export interface UnreadableTask {
  id: string;
  reason: string;
}

/** Every task of the project whose state cannot be read, and why (never fatal for the others). */
export async function listUnreadableTasks(root: string): Promise<UnreadableTask[]> {
  const unreadable: UnreadableTask[] = [];
  for (const name of await readdir(projectPaths(root).tasks).catch(() => [] as string[])) {
    if (!isValidTaskId(name)) continue;
    const dir = taskDirOf(root, name);
    if (!existsSync(controlTaskPaths(root, name).state) && !existsSync(join(dir, "state.json"))) continue;
    try {
      await readState(dir);
    } catch (error) {
      unreadable.push({ id: name, reason: messageOf(error) });
    }
  }
  return unreadable;
}
