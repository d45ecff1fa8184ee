import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CaesarError, errnoOf } from "./errors.js";
import { isProcessAlive, recordProcess } from "./process.js";

export interface LockOptions {
  /** Give up after this long (ms). */
  timeoutMs?: number;
  /** A lock older than this whose owner cannot be proven alive is stolen (ms). */
  staleMs?: number;
  /** Poll interval while waiting (ms). */
  pollMs?: number;
}

/**
 * A cross-process lock: an atomic `mkdir`, with an owner file naming the pid that holds it.
 * A lock whose owner died (positive proof: its recorded pid is gone) is taken over at once;
 * one older than `staleMs` with no readable owner is stolen too.
 */
export async function withFileLock<T>(
  lockDir: string,
  fn: () => Promise<T>,
  options: LockOptions = {},
): Promise<T> {
  const release = await acquireFileLock(lockDir, options);
  try {
    return await fn();
  } finally {
    await release();
  }
}

export async function acquireFileLock(
  lockDir: string,
  options: LockOptions = {},
): Promise<() => Promise<void>> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const staleMs = options.staleMs ?? 60_000;
  const pollMs = options.pollMs ?? 20;
  const deadline = Date.now() + timeoutMs;
  const owner = join(lockDir, "owner.json");
  for (;;) {
    try {
      await mkdir(lockDir);
      await writeFile(owner, JSON.stringify({ ...recordProcess(process.pid), at: Date.now() }));
      return async () => {
        await rm(lockDir, { recursive: true, force: true });
      };
    } catch (error) {
      if (errnoOf(error) !== "EEXIST") throw error;
    }
    if (await isStale(owner, staleMs)) {
      await rm(lockDir, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new CaesarError("lock_timeout", `Timed out waiting for the lock ${lockDir}.`, {
        detail: "Another caesar process holds it. If none is running, remove that directory and retry.",
      });
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

async function isStale(ownerFile: string, staleMs: number): Promise<boolean> {
  try {
    const owner = JSON.parse(await readFile(ownerFile, "utf8")) as {
      pid: number;
      start?: string;
      at: number;
    };
    if (!isProcessAlive(owner)) return true;
    return false;
  } catch {
    // No owner file yet: the holder is between mkdir and writing it, or died there. Judge by age.
    try {
      const info = await stat(ownerFile.slice(0, -"/owner.json".length));
      return Date.now() - info.mtimeMs > staleMs;
    } catch {
      return false;
    }
  }
}
