import { existsSync, readFileSync } from "node:fs";
import { readdir, readFile, unlink } from "node:fs/promises";
import { join } from "node:path";
import { parseDocument } from "../../protocol/documents.js";
import { assertTaskId, isValidTaskId } from "../../protocol/ids.js";
import type { Task } from "../../protocol/task.js";
import { type TaskPaths, taskPaths } from "../../protocol/task-dir.js";
import { writeFileAtomic } from "../../support/atomic-file.js";
import { CaesarError, errnoOf, UsageError } from "../../support/errors.js";
import { withLock } from "../../support/lock.js";
import { controlOfTaskDir, controlTaskPaths, makePrivateControlDir, taskLocationOf } from "./control.js";
import { EventWriter } from "./event-log.js";
import { projectPaths } from "./project.js";
import { appendRefusal } from "./refusals.js";
import { type TaskState, TaskStateSchema } from "./state.js";
import { readTaskText, readTaskTextOrNothing } from "./task-files.js";
import { isPlanMirrorIntact, restorePlanMirror } from "./task-plan.js";

export interface TaskRecord {
  id: string;
  dir: string;
  paths: TaskPaths;
  state: TaskState;
}

export function taskDirOf(root: string, id: string): string {
  return join(projectPaths(root).tasks, assertTaskId(id));
}

/**
 * A task's directory as caesar's record of it says (the project it belongs to), found from any root that
 * shares its control directory — never where a request that names it happens to be planned.
 */
export function recordedTaskDirOf(root: string, id: string): string {
  try {
    const record = JSON.parse(readFileSync(controlTaskPaths(root, id).state, "utf8")) as { root?: unknown };
    if (typeof record.root === "string") return taskDirOf(record.root, id);
  } catch {
    // no record (or unreadable): where the root says
  }
  return taskDirOf(root, id);
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

/**
 * A task's state as caesar holds it: the authoritative `state.json` in the control directory (see
 * control.ts), never the mirror in the task directory, which the agent can write. A task without a
 * control record (made by an older caesar, or a directory someone else made) is read from the mirror and
 * is **unverified**: readable, never trusted to decide (see `isVerifiedTask`).
 */
export async function readState(dir: string): Promise<TaskState> {
  return (await readStateWithSource(dir)).state;
}

/** Does this task have caesar's own record (the control directory), not only files in its directory? */
export function isVerifiedTask(dir: string): boolean {
  const control = controlOfTaskDir(dir);
  return control !== undefined && existsSync(control.state);
}

async function readStateWithSource(
  dir: string,
): Promise<{ state: TaskState; text: string; verified: boolean }> {
  const control = controlOfTaskDir(dir);
  if (control) {
    const text = await readFile(control.state, "utf8").catch((error: unknown) => {
      if (errnoOf(error) === "ENOENT") return undefined;
      throw error;
    });
    if (text !== undefined) return { state: parseState(text, control.state), text, verified: true };
  }
  const path = taskPaths(dir).state;
  let raw: string;
  try {
    const text = await readTaskText(path);
    if (text === undefined) throw new Error("no such file");
    raw = text;
  } catch (error) {
    throw new CaesarError("task_state_missing", `Cannot read ${path}.`, {
      detail: `${(error as Error).message}. The task was never fully created (its front end died while creating it, or it is being created now); \`caesar gc\` takes it back once it is two minutes old.`,
      cause: error,
    });
  }
  return { state: parseState(raw, path), text: raw, verified: false };
}

function parseState(raw: string, path: string): TaskState {
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

/**
 * Write a task's state: its control record (created with `create`, else only when it exists), then the
 * mirror in the task directory, byte for byte the same. A mirror that cannot be written (the agent made
 * it a directory, say) is left as it is: nothing caesar decides reads it.
 */
export async function writeState(
  dir: string,
  state: TaskState,
  options: { create?: boolean; verified?: boolean } = {},
): Promise<void> {
  const text = `${JSON.stringify({ ...state, updated_at: new Date().toISOString() }, null, 2)}\n`;
  const control = controlOfTaskDir(dir);
  const verified = options.verified ?? isVerifiedTask(dir);
  if (control && (verified || options.create === true)) {
    if (options.create === true) await makePrivateControlDir(control.dir);
    await writeFileAtomic(control.state, text);
    await writeMirror(taskPaths(dir).state, text);
    return;
  }
  await writeFileAtomic(taskPaths(dir).state, text);
}

/**
 * Write a mirror of caesar's record. One that cannot be written (a full disk) is removed instead: a stale
 * mirror would differ from the record, and be taken for someone else's rewrite; a missing one is not.
 */
async function writeMirror(path: string, text: string): Promise<void> {
  await writeFileAtomic(path, text, { sync: false }).catch(() => unlink(path).catch(() => undefined));
}

/**
 * Read-modify-write the state under the task's lock (in the control directory for a verified task, so an
 * agent cannot hold it), so two writers never lose each other's update. A mirror that differs from the
 * record it mirrors was rewritten by someone else than caesar: that is recorded against the task, and the
 * write that follows restores it.
 */
export async function updateState(
  dir: string,
  mutate: (state: TaskState) => TaskState | undefined,
): Promise<TaskState> {
  const control = controlOfTaskDir(dir);
  const verified = control !== undefined && existsSync(control.state);
  const lock = verified ? control.lock : join(dir, ".state.lock");
  return withLock(lock, async () => {
    const current = await readStateWithSource(dir);
    const next = mutate(current.state);
    if (next === undefined) return current.state;
    if (current.verified) await noticeRewrittenMirror(dir, current.text, current.state);
    await writeState(dir, next, { verified: current.verified });
    return next;
  });
}

/**
 * A finished task's mirror brought up to its record. The record is written first, the mirror next: a
 * conductor killed between the two leaves the record finished and the mirror still saying it runs, which
 * the task directory's readers (anything that speaks OACP) would show for ever, since nothing writes a
 * finished task's state again. Returns whether the mirror was behind.
 */
export async function catchUpFinishedMirror(dir: string): Promise<boolean> {
  const control = controlOfTaskDir(dir);
  if (!control || !existsSync(control.state)) return false;
  return withLock(control.lock, async () => {
    const text = await readFile(control.state, "utf8");
    if (parseState(text, control.state).phase !== "finished") return false;
    if ((await readTaskTextOrNothing(taskPaths(dir).state)) === text) return false;
    await writeMirror(taskPaths(dir).state, text);
    return true;
  });
}

/**
 * Compare a verified task's mirrors (state.json, plan.json in its task directory) with caesar's records;
 * a mirror someone else rewrote is recorded against the task and put back. Returns what was rewritten.
 */
export async function auditMirrors(dir: string): Promise<string[]> {
  const control = controlOfTaskDir(dir);
  if (!control || !existsSync(control.state)) return [];
  return withLock(control.lock, async () => {
    const text = await readFile(control.state, "utf8");
    const state = parseState(text, control.state);
    const rewritten: string[] = [];
    if (await noticeRewrittenMirror(dir, text, state)) {
      rewritten.push("state.json");
      await writeMirror(taskPaths(dir).state, text);
    }
    if (!(await isPlanMirrorIntact(dir))) {
      rewritten.push("plan.json");
      await recordRewrite(dir, state, "plan.json");
      await restorePlanMirror(dir);
    }
    return rewritten;
  });
}

/** Record (once per rewrite) that the mirror of a verified task's state no longer matches its record. */
async function noticeRewrittenMirror(dir: string, recordText: string, state: TaskState): Promise<boolean> {
  // A mirror that is no file (a FIFO, a link) was moved aside, unopened, and is recorded as such.
  const mirror = await readTaskTextOrNothing(taskPaths(dir).state);
  if (mirror === undefined || mirror === recordText) return false;
  await recordRewrite(dir, state, "state.json");
  return true;
}

async function recordRewrite(dir: string, state: TaskState, file: string): Promise<void> {
  const id = state.id;
  const location = taskLocationOf(dir);
  if (!location) return;
  const summary = `${file} in the task directory was rewritten by someone other than caesar; caesar decides from its own record and put the copy back.`;
  await appendRefusal(location.root, id, {
    code: "records_rewritten",
    action: `rewrite ${file} in its task directory`,
    summary,
  }).catch(() => undefined);
  // An event while the task runs (after its `finished` event, the report's finding says it).
  if (state.phase !== "finished")
    await new EventWriter(taskPaths(dir).events, id)
      .append({ type: "error", code: "records_rewritten", message: summary })
      .catch(() => undefined);
}

export async function readTaskFile(dir: string): Promise<Task | undefined> {
  try {
    const text = await readTaskText(taskPaths(dir).task);
    if (text === undefined) return undefined;
    return parseDocument("task", JSON.parse(text), "task.json");
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
