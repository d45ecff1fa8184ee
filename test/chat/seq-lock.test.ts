import { existsSync, mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { acquireSeqLock, initChannel, makeChatContext, postMessage } from "../../src/chat/index.js";
import { makeChatRoot } from "./helpers.js";

async function channelDir(): Promise<string> {
  const ctx = makeChatContext({ root: makeChatRoot(), env: {} });
  return (await initChannel(ctx, "c")).channel.dir;
}

function backdate(path: string, seconds: number): void {
  const past = new Date(Date.now() - seconds * 1000);
  utimesSync(path, past, past);
}

describe("the _seq.lock directory", () => {
  it("is an empty directory while held and gone after release", async () => {
    const dir = await channelDir();
    const lock = await acquireSeqLock(dir, { staleMs: 10_000 });
    expect(existsSync(join(dir, "_seq.lock"))).toBe(true);
    expect(await lock.stillHeld()).toBe(true);
    await lock.release();
    expect(existsSync(join(dir, "_seq.lock"))).toBe(false);
  });

  it("steals a stale lock (also one with an owner file inside, as another tool may leave)", async () => {
    const dir = await channelDir();
    mkdirSync(join(dir, "_seq.lock"));
    writeFileSync(join(dir, "_seq.lock", "owner"), "pid 1234");
    backdate(join(dir, "_seq.lock"), 60);
    const stolen: number[] = [];
    const lock = await acquireSeqLock(dir, { staleMs: 5_000, onSteal: (age) => stolen.push(age) });
    expect(stolen).toHaveLength(1);
    expect(stolen[0]).toBeGreaterThan(5_000);
    await lock.release();
  });

  it("also waits on, and steals when stale, a lock *file* (the O_CREAT|O_EXCL variant of other tools)", async () => {
    const dir = await channelDir();
    writeFileSync(join(dir, "_seq.lock"), "");
    await expect(acquireSeqLock(dir, { staleMs: 60_000, timeoutMs: 100 })).rejects.toMatchObject({
      code: "lock_timeout",
    });
    backdate(join(dir, "_seq.lock"), 120);
    const lock = await acquireSeqLock(dir, { staleMs: 60_000 });
    await lock.release();
    expect(existsSync(join(dir, "_seq.lock"))).toBe(false);
  });

  it("never steals a fresh lock: it times out with a clear error instead", async () => {
    const dir = await channelDir();
    mkdirSync(join(dir, "_seq.lock"));
    await expect(acquireSeqLock(dir, { staleMs: 60_000, timeoutMs: 200 })).rejects.toMatchObject({
      code: "lock_timeout",
      message: expect.stringContaining("_seq.lock"),
    });
    expect(existsSync(join(dir, "_seq.lock"))).toBe(true);
  });

  it("a holder knows when its lock was stolen, and does not release the thief's", async () => {
    const dir = await channelDir();
    const slow = await acquireSeqLock(dir, { staleMs: 10_000 });
    backdate(join(dir, "_seq.lock"), 60);
    const thief = await acquireSeqLock(dir, { staleMs: 10_000 });
    expect(await slow.stillHeld()).toBe(false);
    await slow.release();
    expect(await thief.stillHeld()).toBe(true);
    await thief.release();
  });

  it("clears a steal lock left by a stealer that died", async () => {
    const dir = await channelDir();
    mkdirSync(join(dir, "_seq.lock"));
    backdate(join(dir, "_seq.lock"), 60);
    mkdirSync(join(dir, "_seq.lock.steal"));
    backdate(join(dir, "_seq.lock.steal"), 60);
    const lock = await acquireSeqLock(dir, { staleMs: 1_000 });
    await lock.release();
    expect(existsSync(join(dir, "_seq.lock.steal"))).toBe(false);
  });

  it("a post waits for a live holder, then gets the next sequence", async () => {
    const ctx = makeChatContext({ root: makeChatRoot(), env: {} });
    const { dir } = (await initChannel(ctx, "c")).channel;
    const holder = await acquireSeqLock(dir, { staleMs: 60_000 });
    const post = postMessage(ctx, "c", { from: "a", title: "queued" });
    setTimeout(() => void holder.release(), 100);
    expect((await post).seq).toBe(1);
  });
});
