import { mkdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import {
  type ChatContext,
  getRoster,
  initChannel,
  listChannels,
  makeChatContext,
  peekMessages,
  postMessage,
  readMessages,
} from "../../src/chat/index.js";
import { scanForRead } from "../../src/chat/read.js";
import { makeChatRoot } from "./helpers.js";

let ctx: ChatContext;
let dir: string;
beforeEach(async () => {
  ctx = makeChatContext({ root: makeChatRoot(), env: {} });
  dir = (await initChannel(ctx, "c", { members: ["alice", "bob"] })).channel.dir;
});

/** A file another tool wrote, finished a minute ago (so no reader takes it for one still being written). */
function foreign(name: string, text: string): void {
  writeFileSync(join(dir, name), text);
  const past = new Date(Date.now() - 60_000);
  utimesSync(join(dir, name), past, past);
}

describe("read", () => {
  it("never treats _ or . files, or other names, as messages; a folder named like one is passed over", async () => {
    foreign("_notes.md", "---\nfrom: x\n---\n");
    foreign(".0005-x-y.md", "---\nfrom: x\n---\n");
    foreign("README.md", "---\nfrom: x\n---\n");
    foreign("0006-x-y.md.tmp", "---\nfrom: x\n---\n");
    foreign("task-1.md", "---\nfrom: x\n---\n");
    mkdirSync(join(dir, "0007-x-folder.md"));
    const read = await readMessages(ctx, "c", { as: "bob" });
    expect(read.messages).toEqual([]);
    expect(read.skipped).toEqual([
      { seq: 7, file: "0007-x-folder.md", problem: "is a folder, not a message" },
    ]);
    expect(read.max_seq).toBe(7);
  });

  it("reports a malformed message once, delivers the rest, and passes the cursor over it", async () => {
    await postMessage(ctx, "c", { from: "alice", title: "first" });
    foreign("0002-mallory-broken.md", "no frontmatter here");
    await postMessage(ctx, "c", { from: "alice", title: "third" });
    const read = await readMessages(ctx, "c", { as: "bob" });
    expect(read.messages.map((message) => message.title)).toEqual(["first", "third"]);
    expect(read.skipped).toEqual([
      { seq: 2, file: "0002-mallory-broken.md", problem: "does not start with a `---` frontmatter line" },
    ]);
    expect(read.cursor.after).toBe(3);
    expect((await readMessages(ctx, "c", { as: "bob" })).skipped).toEqual([]);
  });

  it("does not follow a symbolic link posing as a message", async () => {
    const outside = join(dir, "..", "..", "secret.txt");
    writeFileSync(outside, "---\nfrom: root\ntitle: secret\n---\nsecret\n");
    symlinkSync(outside, join(dir, "0001-x-link.md"));
    const read = await readMessages(ctx, "c", { as: "bob" });
    expect(read.messages).toEqual([]);
    expect(read.skipped).toEqual([{ seq: 1, file: "0001-x-link.md", problem: "is a symbolic link" }]);
    expect(read.cursor.after).toBe(1);
  });

  it("delivers another tool's message larger than 1 MiB with its body cut, and says so", async () => {
    foreign("0001-x-huge.md", `---\nfrom: x\ntitle: big\n---\n${"x".repeat(2 * 1024 * 1024)}\n`);
    const read = await readMessages(ctx, "c", { as: "bob" });
    expect(read.skipped).toEqual([]);
    expect(read.messages).toHaveLength(1);
    expect(read.messages[0]!.title).toBe("big");
    expect(read.messages[0]!.body.length).toBeLessThan(1024 * 1024);
    expect(read.messages[0]!.warnings).toContainEqual(
      expect.stringMatching(/0001-x-huge\.md is 2097\d+ bytes: its body is cut/),
    );
  });

  it("accepts messages written by another implementation, and sequences continue after them", async () => {
    foreign(
      "0001-Codex-hi.md",
      "---\nseq: 1\nfrom: Codex\nto: bob,Alice\nchannel: c\nts: 2026-07-17T14:03:22+07:00\ntitle: hi\n---\n",
    );
    foreign(
      "0010-gemini-jump.md",
      "---\nseq: 10\nfrom: gemini\nchannel: c\nts: 2026-07-17T14:03:22+07:00\ntitle: jump\n---\n",
    );
    const read = await readMessages(ctx, "c", { as: "bob" });
    expect(read.messages.map((message) => [message.seq, message.from, message.warnings])).toEqual([
      [1, "Codex", []],
      [10, "gemini", []],
    ]);
    expect((await postMessage(ctx, "c", { from: "bob", title: "next" })).seq).toBe(11);
  });

  it("keeps the cursor when peeking, never moves it backwards, and survives a garbled cursor file", async () => {
    await postMessage(ctx, "c", { from: "alice", title: "one" });
    expect((await readMessages(ctx, "c", { as: "bob", peek: true })).cursor).toEqual({ before: 0, after: 0 });
    mkdirSync(join(dir, ".cursors"), { recursive: true });
    writeFileSync(join(dir, ".cursors", "bob.txt"), "50\n");
    const ahead = await readMessages(ctx, "c", { as: "bob" });
    expect(ahead.cursor).toEqual({ before: 50, after: 50 });
    writeFileSync(join(dir, ".cursors", "bob.txt"), "garbage");
    const garbled = await readMessages(ctx, "c", { as: "bob" });
    expect(garbled.messages.map((message) => message.title)).toEqual(["one"]);
    expect(garbled.warnings[0]).toMatch(/cursor ignored/);
    // Written as chat.py writes it.
    expect(readFileSync(join(dir, ".cursors", "bob.txt"), "utf8")).toBe("1");
  });
});

describe("a listing taken while posters write", () => {
  const listing = (...seqs: number[]) => ({
    entries: seqs.map((seq) => ({ seq, file: `${String(seq).padStart(4, "0")}-a-m.md` })),
    maxSeq: Math.max(0, ...seqs),
  });

  it("is taken again when it shows a gap, and the second one is trusted only up to the first one's top", async () => {
    const listings = [listing(1, 3), listing(1, 2, 3, 4)];
    const calls: string[] = [];
    const scan = scanForRead("dir", 0, (dir) => {
      calls.push(dir);
      return listings.shift()!;
    });
    expect(calls).toHaveLength(2);
    expect(scan.entries.map((entry) => entry.seq)).toEqual([1, 2, 3]);
    expect(scan.maxSeq).toBe(3);
  });

  it("is taken once when it has no gap above the cursor", async () => {
    let calls = 0;
    const scan = scanForRead("dir", 2, () => {
      calls++;
      return listing(1, 3, 4, 5);
    });
    expect(calls).toBe(1);
    expect(scan.maxSeq).toBe(5);
  });
});

describe("peek, channels and roster", () => {
  it("peek shows the tail; channels and roster summarise the folder", async () => {
    for (const title of ["a", "b", "c"]) await postMessage(ctx, "c", { from: "alice", title });
    await postMessage(ctx, "c", { from: "bob", to: ["alice"], title: "d" });
    expect((await peekMessages(ctx, "c", 2)).messages.map((message) => message.title)).toEqual(["c", "d"]);
    expect((await peekMessages(ctx, "c", 0)).messages).toEqual([]);
    await readMessages(ctx, "c", { as: "bob" });
    const channels = await listChannels(ctx, { as: "alice" });
    expect(channels).toMatchObject([
      { channel: "c", messages: 4, max_seq: 4, unread: 1, last: { seq: 4, from: "bob" } },
    ]);
    const roster = await getRoster(ctx, "c");
    expect(roster).toMatchObject({
      members: ["alice", "bob"],
      posters: { alice: 3, bob: 1 },
      cursors: { bob: 4 },
    });
  });

  it("lists a channel whose _meta.json is broken, with the problem, and skips folders without one", async () => {
    mkdirSync(join(ctx.root, "not-a-channel"));
    mkdirSync(join(ctx.root, "broken"));
    writeFileSync(join(ctx.root, "broken", "_meta.json"), "{ nope");
    // chat.py's `channels` lists every */_meta.json; caesar lists one it cannot use, with the problem.
    mkdirSync(join(ctx.root, "_private"));
    writeFileSync(join(ctx.root, "_private", "_meta.json"), "{}");
    const channels = await listChannels(ctx);
    expect(channels.map((channel) => channel.channel)).toEqual(["_private", "broken", "c"]);
    expect(channels[0]!.problem).toMatch(/caesar cannot use this channel: .*starts with '.' or '_'/);
    expect(channels[1]!.problem).toMatch(/not JSON/);
  });

  it("an absent root has no channels", async () => {
    expect(await listChannels(makeChatContext({ root: join(ctx.root, "nope"), env: {} }))).toEqual([]);
  });
});
