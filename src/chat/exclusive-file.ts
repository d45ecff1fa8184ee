import {
  closeSync,
  fsyncSync,
  linkSync,
  lstatSync,
  openSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { CaesarError, errnoOf } from "../support/errors.js";
import { type Holder, isHolderGone, thisProcess } from "../support/lock.js";
import { randomHex } from "../support/random.js";

/**
 * Files that must appear whole and never overwrite anything (`_meta.json`, message files, task
 * markers): the content goes to a hidden temp file in the same folder, is flushed to disk, then is
 * hard-linked to its name. `link` fails with EEXIST instead of replacing, and the name shows the whole
 * file or nothing — also after a crash, since the content reached the disk before the name existed.
 *
 * Synchronous on purpose: a post does about ten of these calls while it holds the channel's lock, and
 * each asynchronous call would cost a thread-pool round trip (measured in bench/chat).
 */

/**
 * Write `content` to a hidden temp file beside `path` (its name starts with `.`, so never a message),
 * named after its writer — `.<name>.<where>.<pid>.<start>.<rand>.tmp` (see support/lock.ts) — so that
 * one left by a writer that died is told by the lock's rule. The name is cut to 120 characters there,
 * so the temp name stays within the file system's 255.
 */
export function writeTempFile(path: string, content: string): string {
  const name = basename(path).slice(0, 120);
  const temp = join(dirname(path), `.${name}.${writerTag()}.${randomHex(4)}.tmp`);
  const fd = openSync(temp, "wx", 0o644);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    unlinkQuietly(temp);
    throw error;
  }
  closeSync(fd);
  return temp;
}

// File systems without hard links answer one of these.
const NO_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EMLINK"]);

/**
 * Give the temp file its final name: true when done, false when a file of that name already exists,
 * undefined when the temp file is gone (removed as stale by another writer: the caller starts over).
 * The temp file is gone afterwards in every case.
 */
export function commitTempFile(temp: string, path: string): boolean | undefined {
  try {
    return linkTempFile(temp, path);
  } finally {
    unlinkQuietly(temp);
  }
}

/**
 * As commitTempFile, but the temp file stays (when it was linked, as a second name of the message):
 * a poster removes it after releasing its lock, so that the unlink is not on the lock's clock.
 */
export function linkTempFile(temp: string, path: string): boolean | undefined {
  try {
    linkSync(temp, path);
    return true;
  } catch (error) {
    const code = errnoOf(error);
    if (code === "EEXIST") return false;
    if (code === "ENOENT") return undefined;
    if (code !== undefined && NO_LINKS.has(code)) return renameUnlessExists(temp, path);
    throw error;
  }
}

// Answers of systems that cannot open or flush a directory (Windows, some network file systems).
const NO_DIRECTORY_SYNC = new Set(["EISDIR", "EINVAL", "EPERM", "EACCES", "ENOTSUP", "EOPNOTSUPP", "EBADF"]);

/**
 * Flush a folder's entries to disk: after it, the names created (or removed) in it survive a power
 * loss — fsync on the file flushes its content, not the entry that names it. Where the system cannot
 * flush a directory at all, there is nothing more to do than what it does.
 */
export function syncDirectory(dir: string): void {
  let fd: number;
  try {
    fd = openSync(dir, "r");
  } catch (error) {
    const code = errnoOf(error);
    if (code !== undefined && NO_DIRECTORY_SYNC.has(code)) return;
    throw error;
  }
  try {
    fsyncSync(fd);
  } catch (error) {
    const code = errnoOf(error);
    if (code === undefined || !NO_DIRECTORY_SYNC.has(code)) throw error;
  } finally {
    closeSync(fd);
  }
}

// Without hard links, check-then-rename: exclusive only under a lock the caller holds.
function renameUnlessExists(temp: string, path: string): boolean {
  try {
    statSync(path);
    return false;
  } catch (error) {
    if (errnoOf(error) !== "ENOENT") throw error;
  }
  renameSync(temp, path);
  return true;
}

/**
 * Create `path` with `content`, whole or not at all; false (and nothing written) when it exists. Its
 * name is on disk when this returns true (the folder is flushed).
 */
export function writeFileExclusive(path: string, content: string): boolean {
  if (commitTempFile(writeTempFile(path, content), path) !== true) return false;
  syncDirectoryOf(path, `${basename(path)} was written`);
  return true;
}

/**
 * Flush the folder holding `path` after `done` (a claim's rename, a file's creation), so that it
 * survives a power loss before caesar reports it done; a failure says what was done and what is not
 * promised.
 */
export function syncDirectoryOf(path: string, done: string): void {
  try {
    syncDirectory(dirname(path));
  } catch (error) {
    throw new CaesarError(
      "not_flushed",
      `${done}, but its folder could not be flushed to disk: ${(error as Error).message}`,
      {
        detail:
          "Other agents see the change, but it may not survive a power loss. Check the disk (full, read-only, failing) before relying on it.",
        data: { path },
      },
    );
  }
}

export function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}

let tag: string | undefined;

/** This process in a temp file's name: `<where>.<pid>.<start>` (start 0 where it cannot be read). */
function writerTag(): string {
  if (tag === undefined) {
    const me = thisProcess();
    tag = `${me.where}.${me.pid}.${me.start ?? 0}`;
  }
  return tag;
}

const TEMP_WRITER = /\.([0-9a-f]{12})\.(\d+)\.(\d+)\.[0-9a-f]+\.tmp$/;

/** The writer a temp file's name records (none in an older caesar's `.<name>.<pid>.<rand>.tmp`). */
export function tempFileWriter(name: string): Holder | undefined {
  const match = TEMP_WRITER.exec(name);
  if (match === null) return undefined;
  const [, where, pid, start] = match as unknown as [string, string, string, string];
  return { pid: Number(pid), ...(start === "0" ? {} : { start }), where };
}

/**
 * Remove a temp file left behind by a writer that died, by the lock's one rule (support/lock.ts): at
 * once when its writer is gone, after `staleMs` unchanged when its name records no writer that can be
 * checked. A live writer's temp file is never removed.
 */
export function removeIfWriterGone(path: string, staleMs: number): boolean {
  let unchangedMs: number;
  try {
    unchangedMs = Date.now() - lstatSync(path).mtimeMs;
  } catch {
    return false;
  }
  if (!isHolderGone(tempFileWriter(basename(path)), unchangedMs, staleMs)) return false;
  unlinkQuietly(path);
  return true;
}
