import {
  closeSync,
  constants,
  fstatSync,
  ftruncateSync,
  lstatSync,
  openSync,
  readSync,
  renameSync,
  type Stats,
} from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { basename, dirname, join, relative, sep } from "node:path";
import { CaesarError, errnoOf } from "./errors.js";

/**
 * The one way caesar opens a file in a task directory, which its agent can write: the agent may have put
 * a link there (to the budget ledger, to the person's files), a FIFO (an open of it would wait forever),
 * a directory, a hard link to a file elsewhere, or a file too big to read. Whatever the access, the open
 * never follows a link (O_NOFOLLOW, and every folder between the task directory and the file is checked
 * with lstat), never waits (O_NONBLOCK), and the descriptor it gets is checked with fstat: a regular file
 * (with one link, when it is to be written), within the size cap. Anything else is moved aside (renamed beside itself, never followed)
 * and refused with UnsafeTaskFileError, which the store records against the task as a `high` finding.
 */

/** read: from the start; append: at the end (created 0600 if missing); write: cut to nothing first (created if missing). */
export type TaskFileAccess = "read" | "append" | "write";

/** What was found in place of a regular file. */
export type UnsafeKind = "link" | "fifo" | "socket" | "directory" | "device" | "hard link" | "oversized";

/** The largest task file caesar reads whole (a JSON document, a question, a report). */
export const TASK_FILE_MAX_BYTES = 16 * 1024 * 1024;

export interface TaskFileOptions {
  /** Refuse a file larger than this (default: no cap for append and write, TASK_FILE_MAX_BYTES for read). */
  maxBytes?: number;
  /** The task directory: every folder between it and the file must be a real directory, not a link. */
  within?: string;
  /** Permissions of a file created by append or write (default 0600). */
  mode?: number;
}

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;
const NOCTTY = constants.O_NOCTTY ?? 0;

const FLAGS: Record<TaskFileAccess, number> = {
  read: constants.O_RDONLY | NOFOLLOW | NONBLOCK | NOCTTY,
  append: constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | NOFOLLOW | NONBLOCK | NOCTTY,
  // No O_TRUNC: the file is cut only once the descriptor is known to be a regular file of its own.
  write: constants.O_WRONLY | constants.O_CREAT | NOFOLLOW | NONBLOCK | NOCTTY,
};

export class UnsafeTaskFileError extends CaesarError {
  constructor(
    readonly path: string,
    readonly kind: UnsafeKind,
    readonly movedTo: string | undefined,
  ) {
    super(
      "unsafe_task_file",
      `${path} is a ${kind}, not a regular file caesar wrote: caesar did not open it.`,
      {
        detail: movedTo
          ? `It was moved aside to ${movedTo} (never followed, never read). Something in the task (its agent) put it there; see the task's findings.`
          : "It could not be moved aside; remove it. Something in the task (its agent) put it there.",
        data: { path, kind, moved_to: movedTo ?? null },
      },
    );
    this.name = "UnsafeTaskFileError";
  }
}

function kindOfStats(stats: Stats): UnsafeKind | undefined {
  if (stats.isSymbolicLink()) return "link";
  if (stats.isFIFO()) return "fifo";
  if (stats.isSocket()) return "socket";
  if (stats.isDirectory()) return "directory";
  if (stats.isBlockDevice() || stats.isCharacterDevice()) return "device";
  return undefined;
}

/** What lstat says the name is (the open failed on it, so it is no regular file). */
function kindOfName(path: string): UnsafeKind | undefined {
  try {
    return kindOfStats(lstatSync(path));
  } catch {
    return undefined;
  }
}

function problemOf(stats: Stats, access: TaskFileAccess, options: TaskFileOptions): UnsafeKind | undefined {
  const kind = kindOfStats(stats);
  if (kind) return kind;
  if (!stats.isFile()) return "device";
  // Writing through a hard link writes the file it shares (a ledger, a record). Reading one is harmless, and
  // caesar makes some itself for a moment: an answer appears by link() beside its temp file.
  if (access !== "read" && stats.nlink > 1) return "hard link";
  const cap = options.maxBytes ?? (access === "read" ? TASK_FILE_MAX_BYTES : undefined);
  if (cap !== undefined && stats.size > cap) return "oversized";
  return undefined;
}

/** Rename `path` aside (the name itself: a link is moved, not what it points to). Returns where, if it could. */
export function quarantineTaskFile(path: string): string | undefined {
  const stamp = new Date().toISOString().replace(/[-:.]/g, "");
  const target = join(dirname(path), `${basename(path)}.quarantined-${stamp}-${process.pid}`);
  try {
    renameSync(path, target);
    return target;
  } catch {
    return undefined;
  }
}

function refuse(path: string, kind: UnsafeKind): never {
  throw new UnsafeTaskFileError(path, kind, quarantineTaskFile(path));
}

/** Every folder between `within` and the file must be a directory, not a link to one. */
function checkFolders(path: string, within: string | undefined): void {
  if (within === undefined) return;
  const parts = relative(within, dirname(path))
    .split(sep)
    .filter((part) => part !== "" && part !== ".");
  if (parts.includes("..")) return;
  let folder = within;
  for (const part of parts) {
    folder = join(folder, part);
    const kind = kindOfName(folder);
    if (kind === "link" || (kind !== undefined && kind !== "directory")) refuse(folder, kind);
  }
}

/** The open failed: no file to read is undefined, a name that is not a file is refused, the rest is thrown. */
function failedOpen(path: string, access: TaskFileAccess, error: unknown): undefined {
  const code = errnoOf(error);
  if (code === "ENOENT" && access === "read") return undefined;
  if (code === "ELOOP" || code === "ENXIO" || code === "EISDIR" || code === "EMLINK" || code === "ENODEV") {
    const kind = kindOfName(path) ?? (code === "EISDIR" ? "directory" : code === "ELOOP" ? "link" : "fifo");
    refuse(path, kind);
  }
  throw error;
}

/**
 * Open a task file safely (see above). Undefined when there is no such file and `access` is read (append
 * and write create it, 0600). The caller closes the handle.
 */
export async function openTaskFile(
  path: string,
  access: TaskFileAccess,
  options: TaskFileOptions = {},
): Promise<FileHandle | undefined> {
  checkFolders(path, options.within);
  let handle: FileHandle;
  try {
    handle = await open(path, FLAGS[access], options.mode ?? 0o600);
  } catch (error) {
    return failedOpen(path, access, error);
  }
  try {
    const problem = problemOf(await handle.stat(), access, options);
    if (problem) {
      await handle.close();
      refuse(path, problem);
    }
    if (access === "write") await handle.truncate(0);
    return handle;
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
}

/** openTaskFile, synchronously, as a descriptor (for writers that write synchronously). */
export function openTaskFileSync(
  path: string,
  access: TaskFileAccess,
  options: TaskFileOptions = {},
): number | undefined {
  checkFolders(path, options.within);
  let fd: number;
  try {
    fd = openSync(path, FLAGS[access], options.mode ?? 0o600);
  } catch (error) {
    return failedOpen(path, access, error);
  }
  const problem = problemOf(fstatSync(fd), access, options);
  if (problem) {
    closeSync(fd);
    refuse(path, problem);
  }
  // Cut through the descriptor checked above, never through the name.
  if (access === "write") ftruncateSync(fd, 0);
  return fd;
}

/** The whole text of a task file (undefined when there is none), read through openTaskFile. */
export async function readTaskFileText(
  path: string,
  options: TaskFileOptions = {},
): Promise<string | undefined> {
  const handle = await openTaskFile(path, "read", options);
  if (!handle) return undefined;
  try {
    // The file may grow after the check: never read more than the cap.
    const cap = options.maxBytes ?? TASK_FILE_MAX_BYTES;
    const size = Math.min((await handle.stat()).size, cap);
    const buffer = Buffer.alloc(size);
    const { bytesRead } = await handle.read(buffer, 0, size, 0);
    return buffer.subarray(0, bytesRead).toString("utf8");
  } finally {
    await handle.close();
  }
}

/** readTaskFileText, synchronously (for readers that cannot wait: a worker choosing an id, the relay). */
export function readTaskFileTextSync(path: string, options: TaskFileOptions = {}): string | undefined {
  const fd = openTaskFileSync(path, "read", options);
  if (fd === undefined) return undefined;
  try {
    const cap = options.maxBytes ?? TASK_FILE_MAX_BYTES;
    const buffer = Buffer.alloc(Math.min(fstatSync(fd).size, cap));
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    return buffer.subarray(0, read).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/** Append text to a task file through openTaskFile (created 0600 when missing). */
export async function appendTaskFile(
  path: string,
  text: string | Uint8Array,
  options: TaskFileOptions = {},
): Promise<void> {
  const handle = await openTaskFile(path, "append", options);
  try {
    await handle!.appendFile(text);
  } finally {
    await handle!.close();
  }
}
