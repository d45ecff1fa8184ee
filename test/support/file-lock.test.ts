import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { acquireFileLock, withFileLock } from "../../src/support/file-lock.js";
import { deadPid, ProcessPool } from "../helpers/process-pool.js";
import { tempDir } from "../helpers/repo.js";

const WORKER = fileURLToPath(new URL("./lock-worker.ts", import.meta.url));

function writeOwner(lockDir: string, owner: Record<string, unknown>): void {
  mkdirSync(lockDir, { recursive: true });
  writeFileSync(join(lockDir, "owner.json"), JSON.stringify(owner));
}

describe("the file lock", () => {
  it("appears whole, with its owner, and is gone after release", async () => {
    const dir = tempDir();
    const lockDir = join(dir, ".x.lock");
    const lock = await acquireFileLock(lockDir);
    const owner = JSON.parse(readFileSync(join(lockDir, "owner.json"), "utf8"));
    expect(owner.pid).toBe(process.pid);
    expect(owner.token).toMatch(/^[0-9a-f]{16}$/);
    expect(await lock.stillHeld()).toBe(true);
    await lock.release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it("takes over at once a lock whose owner died, and waits for a live one", async () => {
    const dir = tempDir();
    const lockDir = join(dir, ".x.lock");
    writeOwner(lockDir, { token: "00aa", pid: await deadPid(), at: Date.now() });
    const started = Date.now();
    await withFileLock(lockDir, async () => undefined);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(readdirSync(dir)).toEqual([]);

    writeOwner(lockDir, { token: "00bb", pid: process.ppid, at: Date.now() });
    await expect(acquireFileLock(lockDir, { timeoutMs: 150 })).rejects.toMatchObject({
      code: "lock_timeout",
      message: expect.stringContaining(`process ${process.ppid} holds it`),
    });
    expect(JSON.parse(readFileSync(join(lockDir, "owner.json"), "utf8")).token).toBe("00bb");
    // The waiter left nothing behind.
    expect(readdirSync(dir)).toEqual([".x.lock"]);
  });

  it("lets one waiter at a time take over a dead owner's lock, however many saw it die", async () => {
    const dir = tempDir();
    const lockDir = join(dir, ".x.lock");
    writeOwner(lockDir, { token: "00cc", pid: await deadPid(), at: Date.now() });
    let inside = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 12 }, () =>
        withFileLock(lockDir, async () => {
          inside += 1;
          most = Math.max(most, inside);
          await sleep(2);
          inside -= 1;
        }),
      ),
    );
    expect(most).toBe(1);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("never removes, on release, a lock that someone else now holds", async () => {
    const dir = tempDir();
    const lockDir = join(dir, ".x.lock");
    const lock = await acquireFileLock(lockDir);
    // Taken from us (as when a process is wrongly believed dead): another owner is in place.
    writeOwner(lockDir, { token: "00dd", pid: process.ppid, at: Date.now() });
    expect(await lock.stillHeld()).toBe(false);
    await lock.release();
    expect(JSON.parse(readFileSync(join(lockDir, "owner.json"), "utf8")).token).toBe("00dd");
  });

  it("steals a lock without a readable owner (another tool's, an older caesar's) only once it is stale", async () => {
    const dir = tempDir();
    const lockDir = join(dir, ".x.lock");
    mkdirSync(lockDir);
    writeFileSync(join(lockDir, "junk"), "");
    await expect(acquireFileLock(lockDir, { timeoutMs: 100, staleMs: 60_000 })).rejects.toMatchObject({
      code: "lock_timeout",
    });
    const past = new Date(Date.now() - 120_000);
    utimesSync(lockDir, past, past);
    await withFileLock(lockDir, async () => undefined, { staleMs: 60_000 });
    expect(existsSync(lockDir)).toBe(false);
  });

  it("keeps every update and one owner at a time across processes killed with SIGKILL while they hold it", {
    timeout: 300_000,
  }, async () => {
    const dir = tempDir();
    const lockDir = join(dir, ".counter.lock");
    const data = join(dir, "data");
    mkdirSync(data);
    writeFileSync(join(data, "counter.json"), JSON.stringify({ value: 0, ids: [] }));
    const WORKERS = 6;
    const COUNT = 40;
    const KILLS = 12;
    const pool = new ProcessPool("w", (id) => ["--import", "tsx", WORKER, lockDir, data, id, String(COUNT)]);
    const live = pool.live;
    for (let i = 0; i < WORKERS; i++) pool.start();
    // Kills start once the workers are at work (they take a moment to start).
    while (readCounter(data).value < 5) await sleep(50);
    // Kill the process inside the lock (named by the `inside` marker) two times out of three, a random
    // one otherwise, and start a replacement each time. A kill can miss the inside (on a loaded machine,
    // the marker may name a holder that already left): past KILLS, keep killing holders until one takeover
    // was seen, so that takeovers are always exercised (bounded, for a lock that would never be taken over).
    const tookOver = () => existsSync(join(data, "took-over"));
    for (let kill = 0; (kill < KILLS || !tookOver()) && kill < KILLS * 10 && live.size > 0; kill++) {
      await sleep(100 + Math.random() * 200);
      const holder = readPidOrUndefined(join(data, "inside"));
      const victim =
        (kill % 3 !== 2 || kill >= KILLS) && holder !== undefined
          ? [...live.values()].find((child) => child.pid === holder)
          : [...live.values()][Math.floor(Math.random() * live.size)];
      if (!victim) continue;
      victim.kill("SIGKILL");
      pool.start();
    }
    // Exits are added while replacements start: wait until every one of them has settled.
    expect(await pool.failures()).toEqual([]);

    const state = readCounter(data);
    const violations = existsSync(join(data, "violations"))
      ? readFileSync(join(data, "violations"), "utf8")
      : "";
    expect(violations).toBe("");
    expect(state.value).toBe(state.ids.length);
    expect(new Set(state.ids).size).toBe(state.ids.length);
    const committed = readdirSync(data)
      .filter((name) => name.startsWith("committed-"))
      .flatMap((name) => readFileSync(join(data, name), "utf8").trim().split("\n"))
      .filter((line) => line !== "");
    const kept = new Set(state.ids);
    expect(committed.filter((entry) => !kept.has(entry))).toEqual([]);
    // Every worker that was not killed did its whole count: no lock stayed stuck on a dead owner.
    expect(pool.finished).toBeGreaterThanOrEqual(WORKERS);
    expect(committed.length).toBeGreaterThanOrEqual(pool.finished * COUNT);
    // Some of the kills hit a holder, so takeovers were exercised.
    expect(existsSync(join(data, "took-over"))).toBe(true);
  });
});

function readCounter(data: string): { value: number; ids: string[] } {
  return JSON.parse(readFileSync(join(data, "counter.json"), "utf8"));
}

function readPidOrUndefined(path: string): number | undefined {
  try {
    const pid = Number(readFileSync(path, "utf8"));
    return pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
