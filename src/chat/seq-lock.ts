import { mkdirSync, rmdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { errnoOf } from "../support/errors.js";
import { lockTimeoutError } from "./errors.js";

/**
 * The spec's sequence lock: an empty directory `_seq.lock` in the channel, created with `mkdir`
 * (atomic everywhere), removed when the sequence is allocated and the message written. It stays an
 * empty directory so that another implementation's `rmdir` can release or steal it. The reference
 * implementation takes the same lock, for posts and for claims, so the two tools exclude each other.
 *
 * A lock unchanged for `staleMs` belongs to a poster that died; it is stolen. Stealers take turns
 * through a second lock (`_seq.lock.steal`) and re-check, under it, that the lock they remove is the
 * very one they saw go stale (same inode, same mtime), so two stealers never both win.
 *
 * The file-system calls are synchronous: the lock is held for about a millisecond, and an asynchronous
 * call would cost a thread-pool round trip each. Only the waits between attempts yield.
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
  stillHeld(): boolean;
  /** Remove the lock if it is still ours. */
  release(): void;
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
      mkdirSync(lockDir);
      return heldLock(lockDir, identityOrUndefined(lockDir));
    } catch (error) {
      if (errnoOf(error) !== "EEXIST") throw error;
    }
    const current = identityOrUndefined(lockDir);
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
  const stillHeld = () => {
    const current = identityOrUndefined(lockDir);
    return mine !== undefined && current !== undefined && sameIdentity(current, mine);
  };
  return {
    stillHeld,
    release() {
      if (!stillHeld()) return;
      try {
        rmdirSync(lockDir);
      } catch (error) {
        if (errnoOf(error) !== "ENOENT") throw error;
      }
    },
  };
}

/** Remove the lock if, checked again under the steal lock, it is still the stale one seen. */
async function stealIfStale(channelDir: string, seen: Identity, staleMs: number): Promise<boolean> {
  const lockDir = join(channelDir, SEQ_LOCK);
  const stealDir = join(channelDir, STEAL_LOCK);
  try {
    mkdirSync(stealDir);
  } catch (error) {
    if (errnoOf(error) !== "EEXIST") throw error;
    // Someone else is stealing; a steal lock left by a stealer that died is itself removed when stale.
    const steal = identityOrUndefined(stealDir);
    if (steal !== undefined && Date.now() - steal.mtimeMs > staleMs) removeQuietly(stealDir);
    else await sleep(1);
    return false;
  }
  try {
    const current = identityOrUndefined(lockDir);
    if (current === undefined || !sameIdentity(current, seen) || Date.now() - current.mtimeMs <= staleMs)
      return false;
    // Another implementation may keep an owner file inside its lock: a stale lock goes whole.
    rmSync(lockDir, { recursive: true, force: true });
    return true;
  } finally {
    removeQuietly(stealDir);
  }
}

function removeQuietly(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // Gone already, or someone else's by now.
  }
}

function sameIdentity(a: Identity, b: Identity): boolean {
  return a.ino === b.ino && a.mtimeMs === b.mtimeMs;
}

function identityOrUndefined(path: string): Identity | undefined {
  try {
    const stats = statSync(path);
    return { ino: stats.ino, mtimeMs: stats.mtimeMs };
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return undefined;
    throw error;
  }
}

/** Run `action` under the channel's sequence lock (posts, claims and task markers take turns on it). */
export async function withSeqLock<T>(
  channelDir: string,
  options: SeqLockOptions,
  action: (lock: SeqLock) => T,
): Promise<T> {
  const lock = await acquireSeqLock(channelDir, options);
  try {
    return action(lock);
  } finally {
    lock.release();
  }
}
