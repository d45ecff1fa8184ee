import { join } from "node:path";
import { acquireLock, type HeldLock, withLock } from "../support/lock.js";

/**
 * The channel's sequence lock, `_seq.lock`: the name the spec and its reference implementation use, taken
 * with caesar's one lock (support/lock.ts). The lock is an empty directory made with `mkdir`, as the
 * reference makes it, so the two tools exclude each other; caesar records its holder beside it, in
 * `_seq.lock.owner`, and the reference, which knows nothing of that file, can still remove the
 * directory with `rmdir` when it steals a stale lock. Posts, claims and task markers take turns on it.
 */
export const SEQ_LOCK = "_seq.lock";

export interface SeqLockOptions {
  /** A lock without a holder caesar can read (the reference's) is taken over once unchanged this long. */
  staleMs: number;
  /** Give up after this long (default: the larger of 30 s and two stale periods). */
  timeoutMs?: number;
}

export function acquireSeqLock(channelDir: string, options: SeqLockOptions): Promise<HeldLock> {
  return acquireLock(join(channelDir, SEQ_LOCK), options);
}

/** Run `action` under the channel's sequence lock. */
export function withSeqLock<T>(
  channelDir: string,
  options: SeqLockOptions,
  action: (lock: HeldLock) => T,
): Promise<T> {
  return withLock(join(channelDir, SEQ_LOCK), action, options);
}
