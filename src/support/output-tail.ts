import { type FileHandle, open } from "node:fs/promises";

/** Longest line kept whole in a tail; longer ones are cut (an agent's JSON stream lines are huge). */
const MAX_LINE_CHARS = 500;

/**
 * The last lines of a process's output, bounded in lines and in line length, for failure messages: what a
 * person needs to see why something failed, never the whole log.
 */
export class OutputTail {
  private readonly lines: string[] = [];
  /** The end of raw output not yet terminated by a newline (bounded). */
  private pending = "";

  constructor(private readonly maxLines = 20) {}

  /** Add one complete line. */
  push(line: string): void {
    if (line.trim() === "") return;
    this.lines.push(cutLine(line));
    if (this.lines.length > this.maxLines) this.lines.shift();
  }

  /**
   * Feed raw output in chunks that may end mid-line. Only a chunk's last `maxLines` non-blank lines can be
   * kept, so they are found from its end: a flood's million lines cost one backward scan, not a million
   * pushes.
   */
  pushText(text: string): void {
    const all = this.pending + text;
    const lastNewline = all.lastIndexOf("\n");
    this.pending = all.slice(lastNewline + 1).slice(-MAX_LINE_CHARS * 2);
    const found: string[] = [];
    for (let end = lastNewline; end >= 0 && found.length < this.maxLines; ) {
      const start = end === 0 ? 0 : all.lastIndexOf("\n", end - 1) + 1;
      const line = all.slice(start, end);
      if (line.trim() !== "") found.push(line.endsWith("\r") ? line.slice(0, -1) : line);
      end = start - 1;
    }
    for (const line of found.reverse()) this.push(line);
  }

  /** The last lines, the unterminated one included. */
  get text(): string {
    const pending = this.pending.trim() === "" ? [] : [cutLine(this.pending)];
    return [...this.lines, ...pending].slice(-this.maxLines).join("\n");
  }
}

/** The last `maxLines` non-blank lines of `text`, each cut to a readable length. */
export function tailOf(text: string, maxLines: number): string {
  const tail = new OutputTail(maxLines);
  tail.pushText(text);
  return tail.text;
}

function cutLine(line: string): string {
  const clean = line.replace(/\s+$/, "");
  return clean.length <= MAX_LINE_CHARS ? clean : `${clean.slice(0, MAX_LINE_CHARS - 1)}…`;
}

/** The last `bytes` of a file from offset `from` on, as text ("" when it cannot be read). */
export async function readFileTail(path: string, bytes: number, from = 0): Promise<string> {
  try {
    const handle = await open(path, "r");
    try {
      return await readHandleTail(handle, bytes, from);
    } finally {
      await handle.close();
    }
  } catch {
    return "";
  }
}

/** The last `bytes` of an open file from offset `from` on, as text. */
export async function readHandleTail(handle: FileHandle, bytes: number, from = 0): Promise<string> {
  return (await readHandleTailBytes(handle, bytes, from)).toString("utf8");
}

/** The last `bytes` of an open file from offset `from` on. */
export async function readHandleTailBytes(handle: FileHandle, bytes: number, from = 0): Promise<Buffer> {
  const { size } = await handle.stat();
  const length = Math.max(0, Math.min(size - from, bytes));
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await handle.read(buffer, 0, length, size - length);
  return buffer.subarray(0, bytesRead);
}

/**
 * The last bytes of a byte stream fed in chunks (`maxBytes` of them once that many came), in a ring of its
 * own that grows to `maxBytes` and is then written over: a chunk costs a copy of its end, no allocation, so
 * a flood leaves no garbage behind; nothing is decoded until the text is asked for.
 */
export class ByteTail {
  private ring = Buffer.alloc(0);
  /** Where the oldest kept byte is, and how many are kept. */
  private start = 0;
  private length = 0;

  constructor(private readonly maxBytes: number) {}

  /** Add a chunk (copied: the caller may reuse its buffer). */
  push(chunk: Uint8Array): void {
    const bytes = chunk.length > this.maxBytes ? chunk.subarray(chunk.length - this.maxBytes) : chunk;
    if (bytes.length === 0) return;
    const wanted = Math.min(this.maxBytes, this.length + bytes.length);
    if (wanted > this.ring.length) {
      // Grown by doubling up to its bound, the kept bytes moved to its start.
      const grown = Buffer.alloc(Math.min(this.maxBytes, Math.max(wanted, this.ring.length * 2, 4096)));
      this.copyOut(grown);
      this.ring = grown;
      this.start = 0;
    }
    const size = this.ring.length;
    let at = (this.start + this.length) % size;
    let from = 0;
    while (from < bytes.length) {
      const count = Math.min(bytes.length - from, size - at);
      this.ring.set(bytes.subarray(from, from + count), at);
      from += count;
      at = (at + count) % size;
    }
    const overflow = this.length + bytes.length - size;
    if (overflow > 0) {
      this.start = (this.start + overflow) % size;
      this.length = size;
    } else this.length += bytes.length;
  }

  /** The kept bytes, oldest first (their start may be in the middle of a character or a line). */
  bytes(): Buffer {
    const out = Buffer.alloc(this.length);
    this.copyOut(out);
    return out;
  }

  /** The kept bytes as text, from the first whole character (UTF-8). */
  text(): string {
    const bytes = this.bytes();
    return bytes.subarray(characterStart(bytes, 0)).toString("utf8");
  }

  private copyOut(target: Buffer): void {
    const first = Math.min(this.length, this.ring.length - this.start);
    this.ring.copy(target, 0, this.start, this.start + first);
    this.ring.copy(target, first, 0, this.length - first);
  }
}

/** The first offset at or after `from` that starts a UTF-8 character (past at most 3 continuation bytes). */
export function characterStart(bytes: Uint8Array, from: number): number {
  let at = from;
  while (at < bytes.length && at < from + 3 && (bytes[at]! & 0xc0) === 0x80) at += 1;
  return at;
}
