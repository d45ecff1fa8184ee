import { existsSync, mkdirSync, readdirSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { writeTempFile } from "../../src/chat/exclusive-file.js";
import {
  type ChatContext,
  initChannel,
  MAX_MESSAGE_BYTES,
  makeChatContext,
  peekMessages,
  postMessage,
  readMessages,
  waitForMessages,
} from "../../src/chat/index.js";
import { thisProcess } from "../../src/support/lock.js";
import { parseJsonOutput } from "../helpers/cli.js";
import { deadPid } from "../helpers/process-pool.js";
import { chat, makeChatRoot } from "./helpers.js";

// A message caesar accepts is delivered by every caesar reader; a file caught while another tool
// writes it holds the cursor instead of being passed over.

let ctx: ChatContext;
let dir: string;
beforeEach(async () => {
  ctx = makeChatContext({ root: makeChatRoot(), env: {}, settleMs: 60_000 });
  dir = (await initChannel(ctx, "c")).channel.dir;
});

function backdate(path: string, seconds: number): void {
  const past = new Date(Date.now() - seconds * 1000);
  utimesSync(path, past, past);
}

describe("big messages", () => {
  it("a post over the limit is refused with a clear error, and nothing is written", async () => {
    await expect(
      postMessage(ctx, "c", { from: "alice", title: "big", body: "x".repeat(MAX_MESSAGE_BYTES) }),
    ).rejects.toMatchObject({
      code: "message_too_large",
      message: expect.stringContaining("at most 1048576 bytes"),
    });
    expect(readdirSync(dir).filter((name) => !name.startsWith("_") && !name.startsWith("."))).toEqual([]);
  });

  it("a post just under the limit reaches read, wait and peek", async () => {
    const body = `${"y".repeat(MAX_MESSAGE_BYTES - 200)}\n`;
    const posted = await postMessage(ctx, "c", { from: "alice", to: ["bob"], title: "almost 1 MiB", body });
    const peek = await peekMessages(ctx, "c", 5);
    expect(peek.messages.map((message) => message.seq)).toEqual([posted.seq]);
    const waited = await waitForMessages(ctx, "c", { as: "bob", timeoutMs: 0 });
    expect(waited.timed_out).toBe(false);
    if (waited.timed_out) return;
    expect(waited.messages.map((message) => message.body)).toEqual([body]);
    expect(waited.skipped).toEqual([]);
  });

  it("from the CLI: 2 MiB is refused at post (exit 1), and four posted messages are all peeked", async () => {
    const root = makeChatRoot();
    await chat(root, ["init", "t"]);
    const big = await chat(root, ["post", "t", "--from", "a", "--title", "big", "--json"], {
      input: "z".repeat(2 * 1024 * 1024),
    });
    expect(big.code).toBe(1);
    expect(parseJsonOutput<{ error: { code: string; detail: string } }>(big).error).toMatchObject({
      code: "message_too_large",
      detail: expect.stringContaining("file"),
    });
    for (const n of [1, 2, 3, 4])
      await chat(root, ["post", "t", "--from", "a", "--title", `m${n}`], { input: "w".repeat(200_000) });
    const peek = await chat(root, ["peek", "t", "-n", "10"]);
    expect(peek.code).toBe(0);
    expect(peek.stdout).not.toContain("No messages");
    for (const n of [1, 2, 3, 4]) expect(peek.stdout).toContain(`#${n} a -> all: m${n}`);
    const read = parseJsonOutput<{ messages: unknown[]; skipped: unknown[] }>(
      await chat(root, ["read", "t", "--as", "b", "--json"]),
    );
    expect(read.messages).toHaveLength(4);
    expect(read.skipped).toEqual([]);
  });
});

describe("a file caught while it is written", () => {
  const whole = (seq: number, title: string) =>
    `---\nseq: ${seq}\nfrom: alice\nto: all\nchannel: c\nts: 2026-07-17T14:03:22+07:00\ntitle: ${title}\n---\nbody\n`;

  it("holds the cursor below it (empty, then half-written), and is delivered once whole", async () => {
    await postMessage(ctx, "c", { from: "alice", title: "first" });
    writeFileSync(join(dir, "0002-alice-second.md"), "");
    writeFileSync(join(dir, "0003-alice-third.md"), whole(3, "third"));
    const first = await readMessages(ctx, "c", { as: "bob" });
    expect(first.messages.map((message) => message.title)).toEqual(["first"]);
    expect(first.pending).toMatchObject({ seq: 2, file: "0002-alice-second.md" });
    expect(first.cursor.after).toBe(1);

    writeFileSync(join(dir, "0002-alice-second.md"), whole(2, "second").slice(0, 40));
    const second = await readMessages(ctx, "c", { as: "bob" });
    expect(second.messages).toEqual([]);
    expect(second.cursor.after).toBe(1);

    writeFileSync(join(dir, "0002-alice-second.md"), whole(2, "second"));
    const third = await readMessages(ctx, "c", { as: "bob" });
    expect(third.messages.map((message) => message.title)).toEqual(["second", "third"]);
    expect(third.pending).toBeUndefined();
    expect(third.cursor.after).toBe(3);
  });

  it("is skipped with a notice once it stays broken past the settle time", async () => {
    writeFileSync(join(dir, "0001-alice-broken.md"), "---\nseq: 1\nfrom: alice\n");
    await postMessage(ctx, "c", { from: "alice", title: "next" });
    expect((await readMessages(ctx, "c", { as: "bob" })).cursor.after).toBe(0);
    backdate(join(dir, "0001-alice-broken.md"), 120);
    const read = await readMessages(ctx, "c", { as: "bob" });
    expect(read.skipped).toEqual([
      { seq: 1, file: "0001-alice-broken.md", problem: "has no closing `---` line after its frontmatter" },
    ]);
    expect(read.messages.map((message) => message.title)).toEqual(["next"]);
    expect(read.cursor.after).toBe(2);
  });

  it("keeps a waiting agent waiting, then wakes it with both messages once the file is whole", async () => {
    writeFileSync(join(dir, "0001-alice-slow.md"), "");
    writeFileSync(join(dir, "0002-alice-fast.md"), whole(2, "fast"));
    const waiting = waitForMessages(ctx, "c", { as: "bob", timeoutMs: 60_000, intervalMs: 50 });
    let settled = false;
    void waiting.then(() => {
      settled = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(settled).toBe(false);
    writeFileSync(join(dir, "0001-alice-slow.md"), whole(1, "slow"));
    const result = await waiting;
    expect(result.timed_out).toBe(false);
    if (result.timed_out) return;
    expect(result.messages.map((message) => message.title)).toEqual(["slow", "fast"]);
    expect(result.cursor.after).toBe(2);
  });

  it("the CLI says which file it waits for", async () => {
    const root = makeChatRoot();
    await chat(root, ["init", "t"]);
    writeFileSync(join(root, "t", "0001-x-y.md"), "");
    const read = await chat(root, ["read", "t", "--as", "bob"]);
    expect(read.code).toBe(0);
    expect(read.stderr).toContain("waiting for 0001-x-y.md");
  });
});

describe("sequence allocation and leftovers", () => {
  it("counts a symbolic link or a folder named like a message, so no sequence is handed out twice", async () => {
    mkdirSync(join(dir, "0005-x-folder.md"));
    expect((await postMessage(ctx, "c", { from: "a", title: "after the folder" })).seq).toBe(6);
    symlinkSync(join(dir, "nowhere"), join(dir, "0009-x-link.md"));
    expect((await postMessage(ctx, "c", { from: "a", title: "after the link" })).seq).toBe(10);
  });

  it("removes a temp file left by a killed poster by the lock's rule: at once when its writer is gone, never a live writer's", async () => {
    const { where, start } = thisProcess();
    const killed = join(dir, `.0003-a-killed.md.${where}.${await deadPid()}.0.0a1b2c3d.tmp`);
    const live = writeTempFile(join(dir, "0004-a-writing.md"), "---\nseq: 4\n");
    expect(live).toContain(`.${where}.${process.pid}.${start}.`);
    writeFileSync(killed, "---\nseq: 3\n");
    backdate(live, ctx.lockStaleMs / 1000 + 60);
    await postMessage(ctx, "c", { from: "a", title: "cleans up" });
    expect(existsSync(killed)).toBe(false);
    expect(existsSync(live)).toBe(true);
  });

  it("an older caesar's temp file, or one of another pid namespace, names no writer it can check: removed once stale", async () => {
    const stale = join(dir, ".0003-a-killed.md.99999.0a1b2c3d.tmp");
    const fresh = join(dir, ".0004-a-writing.md.99998.0a1b2c3e.tmp");
    const elsewhere = join(dir, `.0005-a-there.md.000000000000.${await deadPid()}.0.0a1b2c3f.tmp`);
    for (const file of [stale, fresh, elsewhere]) writeFileSync(file, "---\n");
    backdate(stale, ctx.lockStaleMs / 1000 + 60);
    await postMessage(ctx, "c", { from: "a", title: "cleans up" });
    expect([existsSync(stale), existsSync(fresh), existsSync(elsewhere)]).toEqual([false, true, true]);
    backdate(elsewhere, ctx.lockStaleMs / 1000 + 60);
    await postMessage(ctx, "c", { from: "a", title: "cleans up again" });
    expect(existsSync(elsewhere)).toBe(false);
  });
});
