import { mkdir, rm, rmdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { errnoOf } from "../support/errors.js";
import { lockTimeoutError } from "./errors.js";

/**
 * The spec's sequence lock: an empty directory `_seq.lock` in the channel, created with `mkdir`
 * (atomic everywhere), removed when the sequence is allocated and the message written. It stays an
 * empty directory so that another implementation's `rmdir` can release or steal it.
 *
 * A lock unchanged for `staleMs` belongs to a poster that died; it is stolen. Stealers take turns
 * through a second lock (`_seq.lock.steal`) and re-check, under it, that the lock they remove is the
 * very one they saw go stale (same inode, same mtime), so two stealers never both win.
 */
export const SEQ_LOCK = "_seq.lock";
const STEAL_LOCK = "_seq.lock.steal";
const MAX_BACKOFF_MS = 25;

export interface SeqLockOptions {
  staleMs: number;
  /** Give up after this long (default: three stale periods, at least 30 s). */
  timeoutMs?: number;
  /** Told when a stale lock was removed, with its age in ms. */
  onSteal?: (ageMs: number) => void;
}

export interface SeqLock {
  /** Is the lock still ours (not stolen by someone who took us for dead)? */
  stillHeld(): Promise<boolean>;
  /** Remove the lock if it is still ours. */
  release(): Promise<void>;
}

interface Identity {
  ino: number;
  mtimeMs: number;
}

export async function acquireSeqLock(channelDir: string, options: SeqLockOptions): Promise<SeqLock> {
  const lockDir = join(channelDir, SEQ_LOCK);
  const started = Date.now();
  const timeoutMs = options.timeoutMs ?? Math.max(30_000, options.staleMs * 3);
  let backoff = 1;
  for (;;) {
    try {
      await mkdir(lockDir);
      return heldLock(lockDir, await identityOf(lockDir));
    } catch (error) {
      if (errnoOf(error) !== "EEXIST") throw error;
    }
    const current = await identityOrUndefined(lockDir);
    if (current === undefined) continue;
    const age = Date.now() - current.mtimeMs;
    if (age > options.staleMs) {
      if (await stealIfStale(channelDir, current, options.staleMs)) options.onSteal?.(age);
      continue;
    }
    if (Date.now() - started > timeoutMs)
      throw lockTimeoutError(lockDir, Date.now() - started, options.staleMs);
    await sleep(backoff + Math.random() * backoff);
    backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
  }
}

function heldLock(lockDir: string, mine: Identity | undefined): SeqLock {
  const stillHeld = async () => {
    const current = await identityOrUndefined(lockDir);
    return mine !== undefined && current !== undefined && sameIdentity(current, mine);
  };
  return {
    stillHeld,
    async release() {
      if (!(await stillHeld())) return;
      await rmdir(lockDir).catch((error) => {
        if (errnoOf(error) !== "ENOENT") throw error;
      });
    },
  };
}

/** Remove the lock if, checked again under the steal lock, it is still the stale one seen. */
async function stealIfStale(channelDir: string, seen: Identity, staleMs: number): Promise<boolean> {
  const lockDir = join(channelDir, SEQ_LOCK);
  const stealDir = join(channelDir, STEAL_LOCK);
  try {
    await mkdir(stealDir);
  } catch (error) {
    if (errnoOf(error) !== "EEXIST") throw error;
    // Someone else is stealing; a steal lock left by a stealer that died is itself removed when stale.
    const steal = await identityOrUndefined(stealDir);
    if (steal !== undefined && Date.now() - steal.mtimeMs > staleMs) await rmdir(stealDir).catch(() => {});
    else await sleep(1);
    return false;
  }
  try {
    const current = await identityOrUndefined(lockDir);
    if (current === undefined || !sameIdentity(current, seen) || Date.now() - current.mtimeMs <= staleMs)
      return false;
    // Another implementation may keep an owner file inside its lock: a stale lock goes whole.
    await rm(lockDir, { recursive: true, force: true });
    return true;
  } finally {
    await rmdir(stealDir).catch(() => {});
  }
}

function sameIdentity(a: Identity, b: Identity): boolean {
  return a.ino === b.ino && a.mtimeMs === b.mtimeMs;
}

async function identityOf(path: string): Promise<Identity | undefined> {
  const stats = await stat(path);
  return { ino: stats.ino, mtimeMs: stats.mtimeMs };
}

async function identityOrUndefined(path: string): Promise<Identity | undefined> {
  try {
    return await identityOf(path);
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return undefined;
    throw error;
  }
}
