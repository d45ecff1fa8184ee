import * as fs from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import {
  type ChatContext,
  claimTask,
  initChannel,
  makeChatContext,
  openTask,
  postMessage,
} from "../../src/chat/index.js";
import { parseMessage } from "../../src/chat/message.js";
import { makeChatRoot } from "./helpers.js";

// What a post does to the disk, in order, observed on the real file system: node:fs is wrapped, never
// replaced, so every call still happens. The guarantees pinned here: the message's content is flushed
// before its name exists, the name is created under `_seq.lock`, and the folder is flushed (after the
// lock is released) before the post returns.

type Call = { op: string; path: string };
const calls: Call[] = [];
// Set to make the next flush of a folder fail, as a failing disk would.
let failFolderFlush: string | undefined;
const fdPaths = new Map<number, string>();

vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>();
  const wrapped = {
    ...real,
    openSync: (path: fs.PathLike, ...rest: unknown[]) => {
      const fd = (real.openSync as (...args: unknown[]) => number)(path, ...rest);
      fdPaths.set(fd, String(path));
      return fd;
    },
    fsyncSync: (fd: number) => {
      const path = fdPaths.get(fd) ?? "?";
      if (failFolderFlush !== undefined && !path.endsWith(".tmp")) {
        const code = failFolderFlush;
        failFolderFlush = undefined;
        throw Object.assign(new Error(`${code}: i/o error, fsync`), { code });
      }
      real.fsyncSync(fd);
      calls.push({ op: "fsync", path });
    },
    linkSync: (from: fs.PathLike, to: fs.PathLike) => {
      real.linkSync(from, to);
      calls.push({ op: "link", path: String(to) });
    },
    mkdirSync: (path: fs.PathLike, options?: fs.MakeDirectoryOptions) => {
      const made = real.mkdirSync(path, options);
      calls.push({ op: "mkdir", path: String(path) });
      return made;
    },
    renameSync: (from: fs.PathLike, to: fs.PathLike) => {
      real.renameSync(from, to);
      calls.push({ op: "rename", path: String(to) });
    },
    rmdirSync: (path: fs.PathLike) => {
      real.rmdirSync(path);
      calls.push({ op: "rmdir", path: String(path) });
    },
  };
  return { ...wrapped, default: wrapped };
});

let ctx: ChatContext;
let dir: string;
beforeEach(async () => {
  ctx = makeChatContext({ root: makeChatRoot(), env: {} });
  dir = (await initChannel(ctx, "c")).channel.dir;
  calls.length = 0;
  failFolderFlush = undefined;
});

const lockDir = () => join(dir, "_seq.lock");
const indexOf = (op: string, predicate: (path: string) => boolean) =>
  calls.findIndex((call) => call.op === op && predicate(call.path));

function readWhole(file: string, seq: number) {
  const parsed = parseMessage(fs.readFileSync(join(dir, file), "utf8"), file, seq, "c");
  if (!parsed.ok) throw new Error(`${file}: ${parsed.problem}`);
  return parsed.message;
}

describe("a post's writes, in order", () => {
  it("flushes the message before naming it under the lock, and flushes the folder before returning", async () => {
    const result = await postMessage(ctx, "c", { from: "alice", title: "hello", body: "hi\n" });
    const lock = indexOf("mkdir", (path) => path === lockDir());
    const flushTemp = indexOf("fsync", (path) => path.endsWith(".tmp"));
    const link = indexOf("link", (path) => path === result.path);
    const unlock = indexOf("rmdir", (path) => path === lockDir());
    const flushFolder = indexOf("fsync", (path) => path === dir);
    expect(lock).toBeGreaterThanOrEqual(0);
    expect([lock < flushTemp, flushTemp < link, link < unlock, unlock < flushFolder]).toEqual([
      true,
      true,
      true,
      true,
    ]);
    // One flush of content, one of the folder: nothing is written twice when no one else posts.
    expect(calls.filter((call) => call.op === "fsync")).toHaveLength(2);
    expect(readWhole(result.file, 1)).toMatchObject({ seq: 1, title: "hello", body: "hi\n" });
    expect(fs.readdirSync(dir).filter((name) => name.startsWith("."))).toEqual([".cursors"]);
  });

  it("says so when the folder cannot be flushed: the message is there, its durability is not promised", async () => {
    failFolderFlush = "EIO";
    await expect(postMessage(ctx, "c", { from: "alice", title: "on a failing disk" })).rejects.toMatchObject({
      code: "post_not_flushed",
      message: expect.stringContaining("0001-alice-on-a-failing-disk.md"),
    });
    expect(fs.existsSync(join(dir, "0001-alice-on-a-failing-disk.md"))).toBe(true);
    expect(fs.existsSync(lockDir())).toBe(false);
  });

  it("a system that cannot flush a folder at all (EINVAL) does not fail the post", async () => {
    failFolderFlush = "EINVAL";
    expect((await postMessage(ctx, "c", { from: "alice", title: "on such a system" })).seq).toBe(1);
  });
});

describe("claims, task markers and channels are on disk before they are reported", () => {
  it("a claim's rename is flushed (the folder) before the claim returns; a failing flush says so", async () => {
    const task = await openTask(ctx, "c", "task-7.md", { from: "alice" });
    expect(indexOf("fsync", (path) => path === dir)).toBeGreaterThan(
      indexOf("link", (path) => path === task.path),
    );
    calls.length = 0;
    const claim = await claimTask(ctx, "c", "task-7.md", { as: "bob" });
    expect(claim.claimed).toBe(true);
    const rename = indexOf("rename", (path) => path === join(dir, claim.file!));
    const flush = indexOf("fsync", (path) => path === dir);
    expect(rename).toBeGreaterThanOrEqual(0);
    expect(flush).toBeGreaterThan(rename);

    await openTask(ctx, "c", "task-8.md", { from: "alice" });
    failFolderFlush = "EIO";
    await expect(claimTask(ctx, "c", "task-8.md", { as: "bob" })).rejects.toMatchObject({
      code: "not_flushed",
      message: expect.stringContaining("task-8.md was claimed by bob"),
    });
    // The claim stands (others see it); only its durability was not promised. The lock is free.
    expect(fs.existsSync(join(dir, "task-8.CLAIMED-bob.md"))).toBe(true);
    expect(fs.existsSync(lockDir())).toBe(false);
  });

  it("a new channel's _meta.json and its folder's name are flushed", async () => {
    calls.length = 0;
    const made = await initChannel(ctx, "d");
    const root = join(made.channel.dir, "..");
    const link = indexOf("link", (path) => path === join(made.channel.dir, "_meta.json"));
    expect(indexOf("fsync", (path) => path === made.channel.dir)).toBeGreaterThan(link);
    expect(indexOf("fsync", (path) => path === root)).toBeGreaterThan(link);
  });
});
