import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  agentFiles,
  OutputReader,
  type OutputSink,
  type OutputStream,
  readCursor,
} from "../../../src/engine/conductor/agent-output.js";
import { tempDir } from "../../helpers/repo.js";

// The reader of an agent's output files: it lends each chunk's bytes to the sink (the buffer is reused
// for the next read once the sink is done with it), and moves the cursor past a chunk only once handled.

/** Lines with characters of 2, 3 and 4 bytes, so that chunks cut characters apart. */
function text(lines: number, from = 0): string {
  return Array.from({ length: lines }, (_, i) => `${from + i} é ✓ 😀 ${"x".repeat((from + i) % 70)}\n`).join(
    "",
  );
}

/** A sink that holds each chunk a while before it is done, and checks the bytes lent did not change. */
function slowSink(rawFrom = 0) {
  const got: Record<OutputStream, Buffer[]> = { stdout: [], stderr: [] };
  const replayed: Record<OutputStream, Buffer[]> = { stdout: [], stderr: [] };
  let raw = rawFrom;
  let changed = 0;
  const sink: OutputSink = {
    async consume(stream, bytes) {
      const copy = Buffer.from(bytes);
      await new Promise((resolve) => setTimeout(resolve, 1));
      if (!copy.equals(bytes)) changed += 1;
      got[stream].push(copy);
      raw += copy.length;
      return raw;
    },
    replay(stream, bytes) {
      replayed[stream].push(Buffer.from(bytes));
    },
    async end() {},
  };
  return { sink, got, replayed, changed: () => changed };
}

function setUp() {
  const dir = join(tempDir("caesar-agent-output-"), "agent");
  mkdirSync(dir);
  return agentFiles(dir, 1);
}

describe("an agent's output read as it grows", () => {
  it("hands every byte on once and in order, in chunks that grow during a flood, never changed while lent", async () => {
    const files = setUp();
    const out = Buffer.from(text(60_000)); // about 3 MB
    writeFileSync(files.stdout, out);
    writeFileSync(files.stderr, "warning: é\n");
    const { sink, got, changed } = slowSink();
    const reader = new OutputReader(files, sink, { stdout: 0, stderr: 0, raw: 0 });
    let more = true;
    const reading = reader.readUntil(() => !more);
    // More comes while it reads: the end of a character in the next write.
    const tail = Buffer.from(text(100, 60_000));
    appendFileSync(files.stdout, tail.subarray(0, 7));
    appendFileSync(files.stdout, tail.subarray(7));
    more = false;
    reader.wake();
    await reading;
    await reader.drain();
    reader.close();
    expect(changed()).toBe(0);
    expect(Buffer.concat(got.stdout).equals(Buffer.concat([out, tail]))).toBe(true);
    expect(Buffer.concat(got.stderr).toString()).toBe("warning: é\n");
    // A flood is read in chunks larger than the first (64 KiB), at most 1 MiB each.
    const sizes = got.stdout.map((chunk) => chunk.length);
    expect(Math.max(...sizes)).toBeGreaterThan(64 * 1024);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(1024 * 1024);
    const total = out.length + tail.length + Buffer.byteLength("warning: é\n");
    expect(await readCursor(files.cursor)).toEqual({
      stdout: out.length + tail.length,
      stderr: Buffer.byteLength("warning: é\n"),
      raw: total,
    });
  });

  it("replays what the cursor says was handled, then goes on from there, a character cut at the cursor included", async () => {
    const files = setUp();
    const out = Buffer.from(text(20_000));
    writeFileSync(files.stdout, out);
    // In the middle of a 4-byte character.
    const at = out.indexOf(Buffer.from("😀"), 500_000) + 2;
    const { sink, got, replayed } = slowSink(at);
    const reader = new OutputReader(files, sink, { stdout: at, stderr: 0, raw: at });
    await reader.replay();
    await reader.readUntil(() => true);
    await reader.drain();
    reader.close();
    expect(Buffer.concat(replayed.stdout).equals(out.subarray(0, at))).toBe(true);
    expect(Buffer.concat(got.stdout).equals(out.subarray(at))).toBe(true);
    expect(await readCursor(files.cursor)).toEqual({ stdout: out.length, stderr: 0, raw: out.length });
  });
});
