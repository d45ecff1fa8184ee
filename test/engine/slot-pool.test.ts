import { describe, expect, it } from "vitest";
import { SlotPool } from "../../src/engine/service/slot-pool.js";
import type { SlotHolder } from "../../src/engine/store/state.js";

const never = new AbortController().signal;

function take(pool: SlotPool, id: string, max: number, parent: string | null = null, signal = never) {
  const waits: SlotHolder[][] = [];
  const taken = pool.take(
    id,
    parent,
    () => max,
    async (holders) => void waits.push(holders),
    signal,
  );
  return { taken, waits };
}

/** Whether a promise has settled after the event loop had a turn. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await new Promise((resolve) => setTimeout(resolve, 20));
  return done;
}

describe("the conductor service's slots", () => {
  it("never gives more than max slots, tells a waiter who holds them, and serves waiters in order", async () => {
    const pool = new SlotPool();
    const a = await take(pool, "t_a", 2).taken;
    await take(pool, "t_b", 2).taken;
    const c = take(pool, "t_c", 2);
    const d = take(pool, "t_d", 2);
    expect(await settled(c.taken)).toBe(false);
    expect(c.waits[0]!.map((holder) => holder.task_id)).toEqual(["t_a", "t_b"]);
    a();
    expect(await settled(c.taken)).toBe(true);
    expect(await settled(d.taken)).toBe(false);
    expect(pool.list().map((holder) => holder.task_id)).toEqual(["t_b", "t_c"]);
  });

  it("a newcomer does not overtake a task that waits longer", async () => {
    const pool = new SlotPool();
    const first = await take(pool, "t_a", 1).taken;
    const waiting = take(pool, "t_b", 1);
    expect(await settled(waiting.taken)).toBe(false);
    first();
    // t_c asks at the moment the slot frees: t_b, which asked first, gets it.
    const newcomer = take(pool, "t_c", 1);
    expect(await settled(waiting.taken)).toBe(true);
    expect(await settled(newcomer.taken)).toBe(false);
  });

  it("lends a running parent's place to one sub-task at a time, so a chain deeper than max runs", async () => {
    const pool = new SlotPool();
    await take(pool, "t_parent", 1).taken;
    const child = await take(pool, "t_child", 1, "t_parent").taken;
    const grandchild = await take(pool, "t_grand", 1, "t_child").taken;
    const sibling = take(pool, "t_sibling", 1, "t_parent");
    expect(await settled(sibling.taken)).toBe(false);
    grandchild();
    child();
    expect(await settled(sibling.taken)).toBe(true);
    // Lent places are not slots: only the parent is listed as holding one.
    expect(pool.list().map((holder) => holder.task_id)).toEqual(["t_parent"]);
  });

  it("counts a task taken over at once, whatever the limit, and gives it the same place when it asks", async () => {
    const pool = new SlotPool();
    await take(pool, "t_a", 1).taken;
    const claimed = pool.claim("t_adopted");
    expect(pool.size).toBe(2);
    const asked = await take(pool, "t_adopted", 1).taken;
    expect(asked).toBe(claimed);
    const queued = take(pool, "t_new", 2);
    expect(await settled(queued.taken)).toBe(false);
    claimed();
    expect(await settled(queued.taken)).toBe(true);
  });

  it("counts other processes' running tasks against the limit", async () => {
    const foreign: SlotHolder[] = [{ task_id: "t_other", pid: 1, since: "2026-01-01T00:00:00.000Z" }];
    const pool = new SlotPool(() => foreign);
    const waiting = take(pool, "t_a", 1);
    expect(await settled(waiting.taken)).toBe(false);
    expect(waiting.waits[0]).toEqual(foreign);
    foreign.length = 0;
    pool.wakeAll();
    expect(await settled(waiting.taken)).toBe(true);
  });

  it("a waiter that is cancelled leaves the queue and lets the next one through", async () => {
    const pool = new SlotPool();
    const first = await take(pool, "t_a", 1).taken;
    const cancel = new AbortController();
    const cancelled = take(pool, "t_b", 1, null, cancel.signal);
    const next = take(pool, "t_c", 1);
    expect(await settled(cancelled.taken)).toBe(false);
    cancel.abort(new Error("cancelled"));
    await expect(cancelled.taken).rejects.toThrow("cancelled");
    first();
    expect(await settled(next.taken)).toBe(true);
  });
});
