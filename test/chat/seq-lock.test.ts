import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { acquireSeqLock, initChannel, makeChatContext, postMessage } from "../../src/chat/index.js";
import { makeChatRoot } from "./helpers.js";

// What chat adds to caesar's one lock (test/support/lock.test.ts has the lock itself): the reference's
// name and shape, `_seq.lock` an empty directory, and posts that take turns on it.

async function channel() {
  const ctx = makeChatContext({ root: makeChatRoot(), env: {} });
  return { ctx, dir: (await initChannel(ctx, "c")).channel.dir };
}

function backdate(path: string, seconds: number): void {
  const past = new Date(Date.now() - seconds * 1000);
  utimesSync(path, past, past);
}

const leftovers = (dir: string) => readdirSync(dir).filter((name) => name.startsWith("_seq.lock"));

describe("the _seq.lock directory", () => {
  it("is an empty directory while held (the reference can rmdir it), its holder beside it in _seq.lock.owner", async () => {
    const { dir } = await channel();
    const lock = await acquireSeqLock(dir, { staleMs: 10_000 });
    expect(readdirSync(join(dir, "_seq.lock"))).toEqual([]);
    expect(JSON.parse(readFileSync(join(dir, "_seq.lock.owner"), "utf8")).pid).toBe(process.pid);
    expect(lock.stillHeld()).toBe(true);
    lock.release();
    expect(leftovers(dir)).toEqual([]);
  });

  it("the reference's own lock (no holder caesar can read) holds posts off until unchanged for the stale period", async () => {
    const { ctx, dir } = await channel();
    mkdirSync(join(dir, "_seq.lock"));
    await expect(acquireSeqLock(dir, { staleMs: ctx.lockStaleMs, timeoutMs: 200 })).rejects.toMatchObject({
      code: "lock_timeout",
      message: expect.stringContaining("_seq.lock"),
    });
    expect(existsSync(join(dir, "_seq.lock"))).toBe(true);
    backdate(join(dir, "_seq.lock"), ctx.lockStaleMs / 1000 + 5);
    expect((await postMessage(ctx, "c", { from: "a", title: "after the stale lock" })).seq).toBe(1);
    expect(leftovers(dir)).toEqual([]);
  });

  it("a post waits for a live holder, then gets the next sequence", async () => {
    const { ctx, dir } = await channel();
    const holder = await acquireSeqLock(dir, { staleMs: 60_000 });
    const post = postMessage(ctx, "c", { from: "a", title: "queued" });
    setTimeout(() => holder.release(), 100);
    expect((await post).seq).toBe(1);
    expect(leftovers(dir)).toEqual([]);
  });
});
