import { existsSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { basename, dirname, relative } from "node:path";
import { readHandleTailBytes } from "../../support/output-tail.js";
import {
  appendTaskFile,
  openTaskFile as openSafely,
  openTaskFileSync as openSafelySync,
  readTaskFileText,
  readTaskFileTextSync,
  type TaskFileAccess,
  type TaskFileOptions,
  UnsafeTaskFileError,
} from "../../support/task-file.js";
import { controlTaskPaths, taskLocationOf } from "./control.js";
import { appendRefusal } from "./refusals.js";

export { TASK_FILE_MAX_BYTES, type TaskFileAccess, UnsafeTaskFileError } from "../../support/task-file.js";

/**
 * Task files as every reader and writer of caesar opens them: through support/task-file.ts (no link
 * followed, no FIFO waited on, regular files only, a size cap), and what it refused is recorded against
 * the task — a refusal in caesar's control directory, read back as a `high` finding of its report.
 */

/** The task directory holding `path` (`<root>/.caesar/tasks/<id>/…`), with its root and id. */
function taskOfPath(path: string): { dir: string; root: string; id: string } | undefined {
  let dir = dirname(path);
  for (let depth = 0; depth < 6; depth += 1) {
    const location = taskLocationOf(dir);
    if (location) return { dir, ...location };
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
  return undefined;
}

/** Record a refused task file against its task (when caesar has a record of it); never throws. */
export async function recordUnsafeTaskFile(error: UnsafeTaskFileError): Promise<void> {
  const task = taskOfPath(error.path);
  if (!task || !existsSync(controlTaskPaths(task.root, task.id).state)) return;
  const name = relative(task.dir, error.path) || basename(error.path);
  await appendRefusal(task.root, task.id, {
    code: "unsafe_task_file",
    action: `replace ${name} in its task directory with a ${error.kind}`,
    summary: `${name} in the task directory was a ${error.kind}, not a file caesar wrote; caesar did not follow or open it${error.movedTo ? ` and moved it aside to ${basename(error.movedTo)}` : ""}.`,
  }).catch(() => undefined);
}

/** The task directory of a path, for the folder check (undefined outside a task directory). */
function withinOf(path: string, options: TaskFileOptions): TaskFileOptions {
  return options.within !== undefined ? options : { ...options, within: taskOfPath(path)?.dir };
}

async function recorded<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof UnsafeTaskFileError) await recordUnsafeTaskFile(error);
    throw error;
  }
}

/** Open a file of a task directory (see support/task-file.ts); a refusal is recorded against the task. */
export function openTaskFile(
  path: string,
  access: TaskFileAccess,
  options: TaskFileOptions = {},
): Promise<FileHandle | undefined> {
  return recorded(() => openSafely(path, access, withinOf(path, options)));
}

/**
 * openTaskFile for a reader that shows what it can: a file that was refused (moved aside, recorded) reads
 * as no file at all.
 */
export async function openTaskFileOrNothing(
  path: string,
  access: TaskFileAccess,
  options: TaskFileOptions = {},
): Promise<FileHandle | undefined> {
  try {
    return await openTaskFile(path, access, options);
  } catch (error) {
    if (error instanceof UnsafeTaskFileError) return undefined;
    throw error;
  }
}

/** openTaskFile, synchronously; the refusal is recorded in the background. */
export function openTaskFileSync(
  path: string,
  access: TaskFileAccess,
  options: TaskFileOptions = {},
): number | undefined {
  try {
    return openSafelySync(path, access, withinOf(path, options));
  } catch (error) {
    if (error instanceof UnsafeTaskFileError) void recordUnsafeTaskFile(error);
    throw error;
  }
}

/** The whole text of a task file (at most its cap), or undefined when there is none. */
export function readTaskText(path: string, options: TaskFileOptions = {}): Promise<string | undefined> {
  return recorded(() => readTaskFileText(path, withinOf(path, options)));
}

/** readTaskText, synchronously; a refused file (recorded in the background) reads as undefined too. */
export function readTaskTextSync(path: string, options: TaskFileOptions = {}): string | undefined {
  try {
    return readTaskFileTextSync(path, withinOf(path, options));
  } catch (error) {
    if (error instanceof UnsafeTaskFileError) {
      void recordUnsafeTaskFile(error);
      return undefined;
    }
    throw error;
  }
}

/** The same, where a refused or missing file reads as undefined (a reader that shows what it can). */
export async function readTaskTextOrNothing(
  path: string,
  options: TaskFileOptions = {},
): Promise<string | undefined> {
  try {
    return await readTaskText(path, options);
  } catch {
    return undefined;
  }
}

/** Append text to a task file (created 0600 when missing). */
export function appendTaskText(
  path: string,
  text: string | Uint8Array,
  options: TaskFileOptions = {},
): Promise<void> {
  return recorded(() => appendTaskFile(path, text, withinOf(path, options)));
}

/** The last `bytes` of a task file from offset `from` on, as text ("" when it cannot be read). */
export async function readTaskTail(path: string, bytes: number, from = 0): Promise<string> {
  return (await readTaskTailBytes(path, bytes, from)).toString("utf8");
}

/** The last `bytes` of a task file from offset `from` on (none when it cannot be read). */
export async function readTaskTailBytes(path: string, bytes: number, from = 0): Promise<Buffer> {
  try {
    const handle = await openTaskFile(path, "read", { maxBytes: Number.MAX_SAFE_INTEGER });
    if (!handle) return Buffer.alloc(0);
    try {
      return await readHandleTailBytes(handle, bytes, from);
    } finally {
      await handle.close();
    }
  } catch {
    return Buffer.alloc(0);
  }
}
