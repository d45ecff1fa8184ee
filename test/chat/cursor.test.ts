import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import {
  type ChatContext,
  initChannel,
  makeChatContext,
  postMessage,
  readMessages,
} from "../../src/chat/index.js";
import { makeChatRoot } from "./helpers.js";

let ctx: ChatContext;
let dir: string;
beforeEach(async () => {
  ctx = makeChatContext({ root: makeChatRoot(), env: {} });
  dir = (await initChannel(ctx, "c")).channel.dir;
});

describe("cursor files", () => {
  it("are named by the reference's slug of the agent, and hold the number as chat.py writes it", async () => {
    await postMessage(ctx, "c", { from: "alice", title: "hello" });
    for (const agent of ["bob_2", "claude.code", "Alice", "Claude Code"])
      await readMessages(ctx, "c", { as: agent });
    expect(readdirSync(join(dir, ".cursors")).sort()).toEqual(["alice.txt", "bob-2.txt", "claude-code.txt"]);
    expect(readFileSync(join(dir, ".cursors", "bob-2.txt"), "utf8")).toBe("1");
  });

  it("one agent keeps one cursor whichever tool wrote it: a message is not delivered twice", async () => {
    await postMessage(ctx, "c", { from: "alice", title: "one" });
    mkdirSync(join(dir, ".cursors"), { recursive: true });
    // chat.py read as bob_2 up to #1.
    writeFileSync(join(dir, ".cursors", "bob-2.txt"), "1");
    expect((await readMessages(ctx, "c", { as: "bob_2" })).messages).toEqual([]);
  });

  it("still reads a cursor an older caesar named after the agent, and keeps the higher one", async () => {
    for (const title of ["one", "two", "three"]) await postMessage(ctx, "c", { from: "alice", title });
    mkdirSync(join(dir, ".cursors"), { recursive: true });
    writeFileSync(join(dir, ".cursors", "bob_2.txt"), "2\n");
    const read = await readMessages(ctx, "c", { as: "bob_2" });
    expect(read.messages.map((message) => message.title)).toEqual(["three"]);
    expect(readFileSync(join(dir, ".cursors", "bob-2.txt"), "utf8")).toBe("3");
  });

  it("an empty cursor file (chat.py truncates, then writes) is read again before it counts as 0", async () => {
    for (const title of ["one", "two"]) await postMessage(ctx, "c", { from: "alice", title });
    mkdirSync(join(dir, ".cursors"), { recursive: true });
    const path = join(dir, ".cursors", "bob.txt");
    writeFileSync(path, "");
    setTimeout(() => writeFileSync(path, "2"), 25);
    expect((await readMessages(ctx, "c", { as: "bob" })).messages).toEqual([]);
  });
});
