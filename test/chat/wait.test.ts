import { describe, expect, it } from "vitest";
import {
  initChannel,
  makeChatContext,
  postMessage,
  readMessages,
  waitForMessages,
} from "../../src/chat/index.js";
import { makeChatRoot } from "./helpers.js";

async function channel(forcePoll = false) {
  const ctx = makeChatContext({ root: makeChatRoot(), env: {}, forcePoll });
  await initChannel(ctx, "w");
  return ctx;
}

describe("wait (in process)", () => {
  for (const forcePoll of [false, true]) {
    const mode = forcePoll ? "poll" : "watch";
    it(`wakes for a relevant message only, then delivers it and moves the cursor (${mode})`, async () => {
      const ctx = await channel(forcePoll);
      const waiting = waitForMessages(ctx, "w", { as: "bob", timeoutMs: 60_000, intervalMs: 50 });
      await postMessage(ctx, "w", { from: "bob", title: "mine" });
      await postMessage(ctx, "w", { from: "alice", to: ["carol"], title: "carol's" });
      await postMessage(ctx, "w", { from: "alice", to: ["bob"], title: "yours" });
      const result = await waiting;
      expect(result.timed_out).toBe(false);
      if (result.timed_out) return;
      expect(result.mode).toBe(mode);
      expect(result.messages.map((message) => message.title)).toEqual(["yours"]);
      expect(result.cursor.after).toBe(3);
    });
  }

  it("times out without moving the cursor, and checks once with a zero timeout", async () => {
    const ctx = await channel();
    await postMessage(ctx, "w", { from: "alice", to: ["carol"], title: "not for bob" });
    const result = await waitForMessages(ctx, "w", { as: "bob", timeoutMs: 0 });
    expect(result).toMatchObject({ timed_out: true, cursor: 0 });
    await postMessage(ctx, "w", { from: "alice", title: "for all" });
    const now = await waitForMessages(ctx, "w", { as: "bob", timeoutMs: 0 });
    expect(now.timed_out).toBe(false);
  });

  it("respects a cursor that another read of the same agent moved", async () => {
    const ctx = await channel(true);
    await postMessage(ctx, "w", { from: "alice", title: "first" });
    expect((await waitForMessages(ctx, "w", { as: "bob", timeoutMs: 1_000 })).timed_out).toBe(false);
    await postMessage(ctx, "w", { from: "alice", title: "second" });
    await readMessages(ctx, "w", { as: "bob" });
    const result = await waitForMessages(ctx, "w", { as: "bob", timeoutMs: 300, intervalMs: 50 });
    expect(result.timed_out).toBe(true);
  });

  it("stops when aborted, and reports ticks while it sleeps", async () => {
    const ctx = await channel(true);
    const controller = new AbortController();
    const ticks: number[] = [];
    const waiting = waitForMessages(ctx, "w", {
      as: "bob",
      timeoutMs: 60_000,
      intervalMs: 20,
      signal: controller.signal,
      onTick: (waited) => {
        ticks.push(waited);
        if (ticks.length === 3) controller.abort(new Error("cancelled by the client"));
      },
    });
    await expect(waiting).rejects.toThrow("cancelled by the client");
    expect(ticks).toHaveLength(3);
  });

  it("refuses a missing channel before sleeping", async () => {
    const ctx = await channel();
    await expect(waitForMessages(ctx, "nope", { as: "bob", timeoutMs: 60_000 })).rejects.toMatchObject({
      code: "channel_not_found",
    });
  });
});
