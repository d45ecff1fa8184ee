import * as fs from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { type ChatContext, initChannel, makeChatContext, postMessage } from "../../src/chat/index.js";
import { parseMessage } from "../../src/chat/message.js";
import { makeChatRoot } from "./helpers.js";

// What a post does to the disk, in order, observed on the real file system: node:fs is wrapped, never
// replaced, so every call still happens. The guarantees pinned here: the message's content is flushed
// before its name exists, the name is created under `_seq.lock`, and the folder is flushed before the
// post returns; a prediction of the sequence that another post overtook never reaches a name.

type Call = { op: string; path: string };
const calls: Call[] = [];
const fdPaths = new Map<number, string>();
let onTempFlushed: ((path: string) => void) | undefined;

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
      real.fsyncSync(fd);
      const path = fdPaths.get(fd) ?? "?";
      calls.push({ op: "fsync", path });
      if (path.endsWith(".tmp")) onTempFlushed?.(path);
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
  onTempFlushed = undefined;
});

const lockDir = () => join(dir, "_seq.lock");
const indexOf = (op: string, predicate: (path: string) => boolean) =>
  calls.findIndex((call) => call.op === op && predicate(call.path));
const messages = () => fs.readdirSync(dir).filter((name) => /^\d+-/.test(name));

function readWhole(file: string, seq: number) {
  const parsed = parseMessage(fs.readFileSync(join(dir, file), "utf8"), file, seq, "c");
  if (!parsed.ok) throw new Error(`${file}: ${parsed.problem}`);
  return parsed.message;
}

describe("a post's writes, in order", () => {
  it("flushes the message before taking the lock, names it under the lock, flushes the folder before returning", async () => {
    const result = await postMessage(ctx, "c", { from: "alice", title: "hello", body: "hi\n" });
    const flushTemp = indexOf("fsync", (path) => path.endsWith(".tmp"));
    const lock = indexOf("mkdir", (path) => path === lockDir());
    const link = indexOf("link", (path) => path === result.path);
    const unlock = indexOf("rmdir", (path) => path === lockDir());
    const flushFolder = indexOf("fsync", (path) => path === dir);
    expect(flushTemp).toBeGreaterThanOrEqual(0);
    expect([flushTemp < lock, lock < link, link < unlock, unlock < flushFolder]).toEqual([
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

  it("rewrites a message whose predicted sequence another post took meanwhile: the name and the text agree", async () => {
    // Another poster posts #1 (the lock is free) while this post flushes its prediction (#1).
    let intruded = false;
    onTempFlushed = () => {
      if (intruded || fs.existsSync(lockDir())) return;
      intruded = true;
      fs.writeFileSync(join(dir, "0001-bob-meanwhile.md"), "---\nseq: 1\nfrom: bob\ntitle: meanwhile\n---\n");
    };
    const result = await postMessage(ctx, "c", { from: "alice", title: "second" });
    expect(result.seq).toBe(2);
    expect(result.file).toBe("0002-alice-second.md");
    expect(readWhole(result.file, 2).seq).toBe(2);
    expect(messages().sort()).toEqual(["0001-bob-meanwhile.md", "0002-alice-second.md"]);
    // The overtaken prediction was flushed and dropped outside the lock; no temp file is left.
    expect(fs.readdirSync(dir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  });

  it("overtaken again and again, it writes the message under the lock and still gets it right", async () => {
    // Every flush of a temp file outside the lock sees a new message appear: the predictions never
    // hold, so the post falls back to writing under the lock, where no one can overtake it.
    let next = 1;
    onTempFlushed = () => {
      if (fs.existsSync(lockDir())) return;
      fs.writeFileSync(join(dir, `${String(next).padStart(4, "0")}-bob-x.md`), `---\nseq: ${next}\n---\n`);
      next++;
    };
    const result = await postMessage(ctx, "c", { from: "alice", title: "persistent" });
    expect(result.seq).toBe(next);
    expect(readWhole(result.file, result.seq).seq).toBe(result.seq);
    const seqs = messages()
      .map((name) => Number(name.split("-")[0]))
      .sort((a, b) => a - b);
    expect(seqs).toEqual(Array.from({ length: next }, (_, index) => index + 1));
    // The last flush of content happened while holding the lock, then the name, then the folder.
    const lastTempFlush = calls.findLastIndex((call) => call.op === "fsync" && call.path.endsWith(".tmp"));
    const lastLock = calls.findLastIndex((call) => call.op === "mkdir" && call.path === lockDir());
    expect(lastTempFlush).toBeGreaterThan(lastLock);
    expect(indexOf("fsync", (path) => path === dir)).toBeGreaterThan(lastTempFlush);
    expect(fs.readdirSync(dir).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  });
});
