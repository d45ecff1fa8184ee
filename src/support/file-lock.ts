import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { CaesarError, errnoOf } from "./errors.js";
import { isProcessAlive, recordProcess } from "./process.js";
import { randomHex } from "./random.js";

/**
 * caesar's one cross-process lock (state.json, the budget ledger, a task's conclusion, change numbers).
 *
 * The lock is a directory `L` holding `owner.json` (a random token, the pid and its start time). It
 * appears whole: the owner file is written in a private candidate directory `L.<token>.new`, which is
 * then renamed to `L` — atomic, and refused while `L` exists. So a lock never exists without its owner.
 *
 * A lock whose owner is proven dead (its pid gone, or reused by another process) is taken over. Waiters
 * that saw the same dead owner take turns through a guard `L.steal-<dead token>` — itself such a lock —
 * and the one holding it removes `L` only if `L` still has that dead owner. Nothing else can change `L`
 * meanwhile (its owner is dead, acquirers cannot replace it, other stealers wait on the guard), and a
 * token is never reused, so two waiters never both take the lock, even when a stealer dies mid-way.
 *
 * Release removes `L` only if it is still ours. Removal renames `L` aside first (`L.<rand>.old`), so a
 * half-removed lock is never seen in place.
 */

export interface LockOptions {
  /** Give up after this long (ms). */
  timeoutMs?: number;
  /** A lock without a readable owner (left by another tool or an older caesar) is stolen after this long (ms). */
  staleMs?: number;
  /** Longest pause between two attempts while waiting (ms); pauses start at 1 ms and double. */
  pollMs?: number;
}

export interface HeldLock {
  readonly path: string;
  /** Is the lock still ours? */
  stillHeld(): Promise<boolean>;
  /** Remove the lock if it is still ours (never someone else's). */
  release(): Promise<void>;
}

const OWNER_FILE = "owner.json";

interface Owner {
  token: string;
  pid: number;
  start?: string | undefined;
  at: number;
}

/** What is at the lock's path: nothing, a lock with a known owner, or a lock without a readable one. */
type Found =
  | { kind: "none" }
  | { kind: "owned"; owner: Owner; key: string }
  | { kind: "ownerless"; key: string; ageMs: number };

/** Run `fn` holding the lock at `lockDir` (its parent must exist). */
export async function withFileLock<T>(
  lockDir: string,
  fn: () => Promise<T>,
  options: LockOptions = {},
): Promise<T> {
  const lock = await acquireFileLock(lockDir, options);
  try {
    return await fn();
  } finally {
    await lock.release();
  }
}

export async function acquireFileLock(lockDir: string, options: LockOptions = {}): Promise<HeldLock> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const staleMs = options.staleMs ?? 60_000;
  const maxPause = Math.max(1, options.pollMs ?? 25);
  const deadline = Date.now() + timeoutMs;
  const me: Owner = { token: randomHex(8), ...recordProcess(process.pid), at: Date.now() };
  const candidate = `${lockDir}.${me.token}.new`;
  await mkdir(candidate);
  let placed = false;
  try {
    await writeFile(join(candidate, OWNER_FILE), JSON.stringify(me));
    let pause = 1;
    for (;;) {
      if (await tryPlace(candidate, lockDir)) {
        placed = true;
        return heldLock(lockDir, me.token);
      }
      const found = await inspectLock(lockDir);
      if (found.kind === "none") continue;
      const dead = found.kind === "owned" ? !isProcessAlive(found.owner) : found.ageMs > staleMs;
      if (dead) {
        if (await takeOver(lockDir, found.key, deadline, options)) await sweepLeftovers(lockDir);
        continue;
      }
      if (Date.now() > deadline) throw lockTimeoutError(lockDir, found, timeoutMs);
      await sleep(pause + Math.random() * pause);
      pause = Math.min(pause * 2, maxPause);
    }
  } finally {
    if (!placed) await rm(candidate, { recursive: true, force: true });
  }
}

/** Rename the candidate into place; false when a lock is already there. */
async function tryPlace(candidate: string, lockDir: string): Promise<boolean> {
  try {
    // Refused while `lockDir` is a non-empty directory or a file. An *empty* directory is replaced:
    // only another tool (or an older caesar between its mkdir and its owner file) leaves one.
    await rename(candidate, lockDir);
    return true;
  } catch (error) {
    const code = errnoOf(error);
    if (code === "ENOTEMPTY" || code === "EEXIST" || code === "ENOTDIR" || code === "EISDIR") return false;
    throw error;
  }
}

function heldLock(lockDir: string, token: string): HeldLock {
  const stillHeld = async () => {
    const found = await inspectLock(lockDir);
    return found.kind === "owned" && found.owner.token === token;
  };
  return {
    path: lockDir,
    stillHeld,
    async release() {
      if (!(await stillHeld())) return;
      const aside = await moveAside(lockDir);
      if (aside === undefined) return;
      // Checked again once moved: if it was not ours after all, put it back untouched.
      const moved = await readOwner(aside);
      if (moved?.token !== token) {
        await rename(aside, lockDir).catch(() => undefined);
        return;
      }
      await rm(aside, { recursive: true, force: true });
    },
  };
}

/**
 * Remove the lock at `lockDir` if it still is the dead one identified by `key`, under the guard of that
 * key. True when this call removed it.
 */
async function takeOver(
  lockDir: string,
  key: string,
  deadline: number,
  options: LockOptions,
): Promise<boolean> {
  const guard = await acquireFileLock(`${lockDir}.steal-${key}`, {
    ...options,
    timeoutMs: Math.max(1, deadline - Date.now()),
  });
  try {
    const found = await inspectLock(lockDir);
    if (found.kind === "none" || found.key !== key) return false;
    const aside = await moveAside(lockDir);
    if (aside !== undefined) await rm(aside, { recursive: true, force: true });
    return aside !== undefined;
  } finally {
    await guard.release();
  }
}

/** Rename the lock out of the way (atomically), returning where it went; undefined if it was gone. */
async function moveAside(lockDir: string): Promise<string | undefined> {
  const aside = `${lockDir}.${randomHex(8)}.old`;
  try {
    await rename(lockDir, aside);
    return aside;
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * After a takeover (a sign that some process died holding or taking a lock), remove what such deaths leave
 * beside the lock: candidates of dead processes and half-removed locks. Guards are left alone: removing
 * one without holding its own guard could let two stealers through (a guard is removed by its holder).
 * Best effort: nothing here changes who holds the lock.
 */
async function sweepLeftovers(lockDir: string): Promise<void> {
  const parent = dirname(lockDir);
  const prefix = `${basename(lockDir)}.`;
  try {
    for (const name of await readdir(parent)) {
      if (!name.startsWith(prefix)) continue;
      const rest = name.slice(prefix.length);
      const path = join(parent, name);
      if (/^[0-9a-f]+\.old$/.test(rest)) await rm(path, { recursive: true, force: true });
      else if (/^[0-9a-f]+\.new$/.test(rest)) {
        const owner = await readOwner(path);
        if (owner !== undefined && !isProcessAlive(owner)) await rm(path, { recursive: true, force: true });
      }
    }
  } catch {
    // best effort
  }
}

async function inspectLock(lockDir: string): Promise<Found> {
  const owner = await readOwner(lockDir);
  if (owner !== undefined) return { kind: "owned", owner, key: owner.token };
  try {
    const info = await stat(lockDir);
    return {
      kind: "ownerless",
      key: `i${info.ino}m${Math.floor(info.mtimeMs)}`,
      ageMs: Date.now() - info.mtimeMs,
    };
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return { kind: "none" };
    throw error;
  }
}

/** The owner recorded in a lock directory, if readable (an older caesar's owner file has no token). */
async function readOwner(lockDir: string): Promise<Owner | undefined> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(join(lockDir, OWNER_FILE), "utf8"));
  } catch {
    return undefined;
  }
  const record = raw as Partial<Owner> | null;
  if (!record || typeof record.pid !== "number" || !Number.isInteger(record.pid) || record.pid <= 0)
    return undefined;
  const token =
    typeof record.token === "string" && /^[0-9a-f]{1,32}$/.test(record.token)
      ? record.token
      : `p${record.pid}a${typeof record.at === "number" ? Math.floor(record.at) : 0}`;
  return {
    token,
    pid: record.pid,
    ...(typeof record.start === "string" ? { start: record.start } : {}),
    at: typeof record.at === "number" ? record.at : 0,
  };
}

function lockTimeoutError(lockDir: string, found: Found, timeoutMs: number): CaesarError {
  const holder =
    found.kind === "owned"
      ? `process ${found.owner.pid} holds it and is still running`
      : "it has no readable owner and is not old enough to be taken over";
  return new CaesarError(
    "lock_timeout",
    `Timed out after ${Math.round(timeoutMs / 1000)} s waiting for the lock ${lockDir}: ${holder}.`,
    {
      detail:
        "Another caesar process is working on the same files; retry when it is done. A lock whose owner has exited is taken over at once, so a lock held this long belongs to a live process (see `ps`).",
    },
  );
}
