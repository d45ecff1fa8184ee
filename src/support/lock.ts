import {
  type BigIntStats,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  rmdirSync,
  rmSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { CaesarError, errnoOf } from "./errors.js";
import { isProcessAlive, processStartTime } from "./process.js";
import { randomHex } from "./random.js";

/**
 * caesar's one cross-process lock: the store's state, the budget ledgers, a task's end, the change
 * counter, a submission, the relay, and chat's `_seq.lock` (posts, claims, task markers).
 *
 * **Layout.** The lock `L` is an empty directory, made with `mkdir` (atomic, and refused while anything
 * named `L` exists). Its holder is recorded beside it, in `L.owner` (JSON: a random token, the pid, the
 * process start time, where that pid means something, and the lock it was written for — `L`'s inode and
 * mtime), written in place right after the `mkdir` (a reader that catches it half written reads no
 * holder, and waits, as for a lock too young to judge). The directory stays empty so that a tool that
 * only knows `mkdir`/`rmdir` — agent-chat's reference, which takes `_seq.lock` that way — waits on
 * caesar's lock, and can remove it with `rmdir` when it steals a lock it finds stale.
 *
 * **The one rule** ({@link isHolderGone}) decides when a holder is dead:
 * - a holder that can be read, and whose pid belongs to this machine and pid namespace, is dead as soon
 *   as its pid no longer exists or belongs to another process (its start time differs): the lock is taken
 *   over at once;
 * - a holder that cannot be read (no `L.owner`, one that names another lock, a holder that died between
 *   its `mkdir` and its record, another tool's lock) or cannot be checked (another machine, another pid
 *   namespace) is dead once the lock has been unchanged (its mtime) for the stale period.
 *
 * **Waiting.** A waiter retries `mkdir` with a jittered backoff (1 ms doubling to 25 ms), and judges the
 * holder — reads the record, checks the process — once the lock has been held, as it sees it, for 50 ms,
 * then every 50 ms: most locks are released within a millisecond or two, and judging costs about ten
 * system calls. So a dead holder's lock is taken over within about 50 ms.
 *
 * **Takeover.** Waiters that find a dead holder take turns through a guard, `L.steal` — itself such a
 * lock — and the one holding it checks again, under it, that `L` is still the very lock it saw (same
 * inode, mtime and record) and still dead; only then does it remove the record and `L`. Nothing else
 * in caesar removes a dead holder's lock, so of any number of waiters exactly one takes it over, also
 * when a waiter dies half way (its guard is taken over by the same rule).
 *
 * **Release** removes the record, then `L`, if `L` is still the holder's own (same inode and mtime:
 * a lock stolen from its holder is replaced by one made later). A lock held longer than half the stale
 * period is touched first, so that between the record's removal and `L`'s, a waiter sees a fresh lock
 * without owner (and waits), never an old one (which it would take over).
 *
 * The calls are synchronous: a post holds `_seq.lock` for about a millisecond, and an asynchronous
 * call would cost a thread-pool round trip each. Only the waits between attempts yield.
 */

export interface LockOptions {
  /**
   * A lock whose holder cannot be read or checked is taken over once unchanged for this long (ms;
   * default 30 s, the reference agent-chat's).
   */
  staleMs?: number;
  /** Give up after this long (ms; default: the larger of 30 s and two stale periods). 0: one attempt. */
  timeoutMs?: number;
  /** Longest pause between two attempts while waiting (ms; default 25); pauses start at 1 ms and double. */
  pollMs?: number;
}

export interface HeldLock {
  readonly path: string;
  /** Is the lock still ours (not taken over by a process that took us for dead)? */
  stillHeld(): boolean;
  /** Remove the lock if it is still ours (never anyone else's). Once only. */
  release(): void;
}

/** A process as another process can check it. */
export interface Holder {
  pid: number;
  /** Its start time (see process.ts), so that a reused pid is told apart; absent where unknown. */
  start?: string | undefined;
  /** Where the pid means something: a hash of the boot and the pid namespace (absent: unknown). */
  where?: string | undefined;
}

export const DEFAULT_STALE_MS = 30_000;
const RECORD_SUFFIX = ".owner";
const GUARD_SUFFIX = ".steal";
/** How long a waiter lets a lock be held before it judges the holder, and then between two judgments. */
const JUDGE_EVERY_MS = 50;
/** The record inside the lock directory that caesar wrote before this layout. */
const LEGACY_RECORD = "owner.json";

/** The file recording who holds the lock at `path`. */
export function lockRecordPath(path: string): string {
  return `${path}${RECORD_SUFFIX}`;
}

let me: Holder | undefined;

/** This process, as others can check it (read once). */
export function thisProcess(): Holder {
  if (me === undefined) {
    const start = processStartTime(process.pid);
    me = { pid: process.pid, ...(start === undefined ? {} : { start }), where: whereAmI() };
  }
  return me;
}

/**
 * Where a pid means something: the boot (another machine, or this one before a reboot, has another)
 * and the pid namespace (a container has its own). A hash, 12 hex digits.
 */
function whereAmI(): string {
  const read = (read: () => string) => {
    try {
      return read().trim();
    } catch {
      return "";
    }
  };
  const boot = read(() => readFileSync("/proc/sys/kernel/random/boot_id", "utf8")) || hostname();
  const namespace = read(() => readlinkSync("/proc/self/ns/pid"));
  return shortHash(`${boot}\n${namespace}`);
}

/**
 * 12 hex digits of a string: FNV-1a, twice with two offsets. Not node:crypto, which would initialise
 * OpenSSL in every process that takes a lock (each `caesar chat post`); no secret is involved.
 */
function shortHash(text: string): string {
  const fnv = (offset: number) => {
    let hash = offset;
    for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619) >>> 0;
    return hash.toString(16).padStart(8, "0");
  };
  return (fnv(2166136261) + fnv(84696351)).slice(0, 12);
}

/**
 * The one liveness rule, for every lock in caesar (and chat's temp files): is the holder of something
 * that has been unchanged for `unchangedMs` dead? See the module's comment.
 */
export function isHolderGone(holder: Holder | undefined, unchangedMs: number, staleMs: number): boolean {
  if (holder !== undefined && canCheck(holder)) return !isProcessAlive(holder);
  return unchangedMs > staleMs;
}

/** Can this process check the holder's pid (same boot and pid namespace, or a record that does not say)? */
function canCheck(holder: Holder): boolean {
  return holder.where === undefined || holder.where === thisProcess().where;
}

/** Run `fn` holding the lock at `path` (its parent must exist). */
export async function withLock<T>(
  path: string,
  fn: (lock: HeldLock) => T | Promise<T>,
  options: LockOptions = {},
): Promise<T> {
  const lock = await acquireLock(path, options);
  try {
    return await fn(lock);
  } finally {
    lock.release();
  }
}

/** Take the lock at `path` (its parent must exist), waiting for a live holder and taking over a dead one. */
export async function acquireLock(path: string, options: LockOptions = {}): Promise<HeldLock> {
  const staleMs = options.staleMs ?? DEFAULT_STALE_MS;
  const timeoutMs = options.timeoutMs ?? Math.max(30_000, 2 * staleMs);
  const maxPause = Math.max(1, options.pollMs ?? 25);
  const deadline = Date.now() + timeoutMs;
  let pause = 1;
  // The lock as this waiter last saw it, and when it last judged its holder.
  let watched: { instance: string; judged: number } | undefined;
  for (;;) {
    const held = tryTake(path, staleMs);
    if (held !== undefined) {
      await sweepGuards(path, staleMs, deadline, maxPause);
      return held;
    }
    const stats = lstatOrUndefined(path);
    if (stats === undefined) continue;
    const now = Date.now();
    const instance = instanceOf(stats);
    if (watched?.instance !== instance) watched = { instance, judged: now };
    // Judging reads the record and the holder's process: done for a lock held, as seen from here, for
    // JUDGE_EVERY_MS (most are released within a millisecond or two), then again every JUDGE_EVERY_MS.
    if (now - watched.judged >= JUDGE_EVERY_MS || now >= deadline) {
      const seen = inspect(path);
      if (seen === undefined) continue;
      if (isGone(seen, staleMs)) {
        await takeOver(path, seen, staleMs, deadline, maxPause);
        watched = undefined;
        continue;
      }
      if (now >= deadline) throw lockTimeoutError(path, seen, timeoutMs, staleMs);
      watched = { instance: seen.instance, judged: now };
    }
    await sleep(pause + Math.random() * pause);
    pause = Math.min(pause * 2, maxPause);
  }
}

/**
 * Is the lock at `path` held by a holder that is not dead by the rule? (A lock being taken, not yet
 * recorded, counts as held.)
 */
export function isLockHeld(path: string, staleMs = DEFAULT_STALE_MS): boolean {
  const seen = inspect(path);
  return seen !== undefined && !isGone(seen, staleMs);
}

/** The recorded holder of the lock at `path`, when there is a lock and its record can be read. */
export function lockHolder(path: string): Holder | undefined {
  return inspect(path)?.holder;
}

/** What is at a lock's path. */
interface Seen {
  /** This very lock: inode and mtime (a lock removed and made again is another). */
  instance: string;
  mtimeMs: number;
  isDirectory: boolean;
  holder?: Holder;
  token?: string;
  /** The holder comes from `L.owner` (else from an older caesar's `L/owner.json`, or nowhere). */
  recordBeside: boolean;
}

interface LockRecord extends Holder {
  token: string;
  /** The lock it was written for (`<inode>:<mtime in ns>`). */
  lock?: string;
}

function tryTake(path: string, staleMs: number): HeldLock | undefined {
  try {
    mkdirSync(path);
  } catch (error) {
    if (errnoOf(error) === "EEXIST") return undefined;
    throw error;
  }
  const stats = lstatOrUndefined(path);
  if (stats === undefined) return undefined;
  const token = randomHex(8);
  const instance = instanceOf(stats);
  const record: LockRecord = { token, ...thisProcess(), lock: instance };
  try {
    writeFileSync(lockRecordPath(path), JSON.stringify({ ...record, at: Date.now() }));
  } catch (error) {
    removeQuietly(path);
    throw error;
  }
  return heldLock(path, instance, Number(stats.mtimeMs), staleMs);
}

function heldLock(path: string, instance: string, mtimeMs: number, staleMs: number): HeldLock {
  let released = false;
  const stillHeld = () => {
    const stats = lstatOrUndefined(path);
    // Only we remove our lock; someone who took it over removed it, and a lock made since has another
    // mtime (it was taken over once unchanged for the stale period) or another inode.
    return stats !== undefined && instanceOf(stats) === instance;
  };
  return {
    path,
    stillHeld,
    release() {
      if (released) return;
      released = true;
      if (!stillHeld()) return;
      // Between the record's removal and the directory's, the lock has no readable holder: make sure a
      // waiter sees it fresh then, not unchanged since we took it.
      if (Date.now() - mtimeMs > staleMs / 2) {
        const now = new Date();
        try {
          utimesSync(path, now, now);
        } catch {
          // Gone or not ours to touch: removed below if it is there.
        }
      }
      // Ours: only the holder of this very lock writes its record.
      unlinkQuietly(lockRecordPath(path));
      removeLockPath(path, true);
    },
  };
}

function isGone(seen: Seen, staleMs: number): boolean {
  return isHolderGone(seen.holder, Date.now() - seen.mtimeMs, staleMs);
}

/**
 * Remove the lock at `path` if, checked again under its guard, it still is the dead lock `seen`. Returns
 * whether this call removed it.
 */
async function takeOver(
  path: string,
  seen: Seen,
  staleMs: number,
  deadline: number,
  pollMs: number,
): Promise<boolean> {
  const guard = await acquireLock(`${path}${GUARD_SUFFIX}`, {
    staleMs,
    pollMs,
    timeoutMs: Math.max(0, deadline - Date.now()),
  });
  try {
    const now = inspect(path);
    if (now === undefined || now.instance !== seen.instance || now.token !== seen.token) return false;
    if (!isGone(now, staleMs)) return false;
    if (now.recordBeside) unlinkQuietly(lockRecordPath(path));
    removeLockPath(path, now.isDirectory);
    return true;
  } finally {
    guard.release();
  }
}

/**
 * Take over the guards a waiter killed while taking a lock over left beside it (`L.steal`, and the
 * guard of that guard), by the same rule and under their own guards: nothing else would ever need them
 * again, and a lock's place must be left as clean as it was found. Two `lstat`s when there is none.
 */
async function sweepGuards(path: string, staleMs: number, deadline: number, pollMs: number): Promise<void> {
  for (const guard of [`${path}${GUARD_SUFFIX}`, `${path}${GUARD_SUFFIX}${GUARD_SUFFIX}`]) {
    const seen = inspect(guard);
    if (seen === undefined || !isGone(seen, staleMs)) continue;
    await takeOver(guard, seen, staleMs, deadline, pollMs).catch(() => false);
  }
}

function inspect(path: string): Seen | undefined {
  const stats = lstatOrUndefined(path);
  if (stats === undefined) return undefined;
  const instance = instanceOf(stats);
  const isDirectory = stats.isDirectory();
  const base = { instance, mtimeMs: Number(stats.mtimeMs), isDirectory };
  const record = readRecord(lockRecordPath(path));
  if (record !== undefined && record.lock === instance)
    return { ...base, holder: holderOf(record), token: record.token, recordBeside: true };
  const legacy = isDirectory ? readRecord(join(path, LEGACY_RECORD)) : undefined;
  if (legacy !== undefined)
    return { ...base, holder: holderOf(legacy), token: `legacy-${legacy.token}`, recordBeside: false };
  return { ...base, recordBeside: false };
}

function holderOf(record: LockRecord): Holder {
  return {
    pid: record.pid,
    ...(record.start === undefined ? {} : { start: record.start }),
    ...(record.where === undefined ? {} : { where: record.where }),
  };
}

/** A holder's record, if it can be read (an older caesar's has no `where` or `lock`). */
function readRecord(file: string): LockRecord | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
  const record = raw as Partial<Record<keyof LockRecord | "at", unknown>> | null;
  if (!record || typeof record.pid !== "number" || !Number.isInteger(record.pid) || record.pid <= 0)
    return undefined;
  return {
    token: typeof record.token === "string" ? record.token : `p${record.pid}a${String(record.at)}`,
    pid: record.pid,
    ...(typeof record.start === "string" ? { start: record.start } : {}),
    ...(typeof record.where === "string" ? { where: record.where } : {}),
    ...(typeof record.lock === "string" ? { lock: record.lock } : {}),
  };
}

function instanceOf(stats: BigIntStats): string {
  return `${stats.ino}:${stats.mtimeNs}`;
}

function lstatOrUndefined(path: string): BigIntStats | undefined {
  try {
    return lstatSync(path, { bigint: true });
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return undefined;
    throw error;
  }
}

/**
 * Remove what is at a lock's path: our empty directory, the reference's, or what another tool or an
 * older caesar left (a directory with an owner file inside, an `O_CREAT|O_EXCL` lock file).
 */
function removeLockPath(path: string, isDirectory: boolean): void {
  try {
    if (isDirectory) rmdirSync(path);
    else unlinkSync(path);
  } catch (error) {
    const code = errnoOf(error);
    if (code === "ENOENT") return;
    if (code === "ENOTEMPTY" || code === "EEXIST") rmSync(path, { recursive: true, force: true });
    else throw error;
  }
}

function removeQuietly(path: string): void {
  try {
    rmdirSync(path);
  } catch {
    // gone already
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // gone already
  }
}

function lockTimeoutError(path: string, seen: Seen, timeoutMs: number, staleMs: number): CaesarError {
  const stale = `it is taken over once unchanged for ${formatSeconds(staleMs)}`;
  const holder =
    seen.holder === undefined
      ? `it names no holder caesar can read (another tool's lock, or a holder that died while taking it); ${stale}`
      : canCheck(seen.holder)
        ? `process ${seen.holder.pid} holds it and is still running`
        : `process ${seen.holder.pid} of another machine or pid namespace holds it; ${stale}`;
  return new CaesarError(
    "lock_timeout",
    `Timed out after ${formatSeconds(timeoutMs)} waiting for the lock ${path}: ${holder}.`,
    {
      detail: `Another process is working on the same files; retry when it is done. A lock whose holder has exited is taken over at once. If you are sure no process holds it, remove ${path} and ${lockRecordPath(path)}.`,
      data: { path, ...(seen.holder === undefined ? {} : { pid: seen.holder.pid }) },
    },
  );
}

function formatSeconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}
