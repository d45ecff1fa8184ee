import type { FileHandle } from "node:fs/promises";
import { safeParseDocument } from "../../protocol/documents.js";
import type { CaesarEvent } from "../../protocol/event.js";
import { MAX_LINE_BYTES, parseJsonLine } from "../../protocol/jsonl.js";
import { openEvents } from "../store/event-log.js";

/** Where one valid event sits in events.jsonl: byte range of its line (without the newline). */
export interface EventSpan {
  event: CaesarEvent;
  start: number;
  end: number;
}

export interface EventSpanRead {
  spans: EventSpan[];
  /** Byte offset just after the last complete line read (a half-written line is left for next time). */
  offset: number;
  /** Complete lines that were not valid events (kept in the file, skipped here, as `readEvents` does). */
  skipped: number;
}

/** How much of the file one call reads at most; the caller continues from the returned offset. */
const CHUNK_BYTES = 16 * 1024 * 1024;

/**
 * Like `readEvents`, but says where each event's line is, so an index can keep byte ranges instead of
 * the events and read a few of them back later (`readEventLines`). Same tolerance: invalid complete lines
 * are skipped, a half-written last line is left for the next call.
 */
export async function readEventSpans(path: string, fromOffset = 0): Promise<EventSpanRead> {
  const handle = await openEvents(path);
  if (!handle) return { spans: [], offset: fromOffset, skipped: 0 };
  const spans: EventSpan[] = [];
  let skipped = 0;
  let offset = fromOffset;
  try {
    const { size } = await handle.stat();
    while (offset < size) {
      const length = Math.min(size - offset, CHUNK_BYTES);
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, offset);
      const end = buffer.subarray(0, bytesRead).lastIndexOf(0x0a);
      if (end === -1) {
        // A line longer than the chunk: skip it whole once it is complete, as LineBuffer drops runaways.
        if (length < CHUNK_BYTES) break;
        const next = await findNewline(handle, offset + length, size);
        if (next === -1) break;
        skipped += 1;
        offset = next + 1;
        continue;
      }
      let lineStart = 0;
      while (lineStart <= end) {
        const newline = buffer.indexOf(0x0a, lineStart);
        const lineEnd = newline > lineStart && buffer[newline - 1] === 0x0d ? newline - 1 : newline;
        if (lineEnd - lineStart <= MAX_LINE_BYTES) {
          const text = buffer.toString("utf8", lineStart, lineEnd);
          if (text.trim() !== "") {
            const parsed = safeParseDocument("event", parseJsonLine(text));
            if (parsed.ok)
              spans.push({ event: parsed.value, start: offset + lineStart, end: offset + lineEnd });
            else skipped += 1;
          }
        } else skipped += 1;
        lineStart = newline + 1;
      }
      offset += end + 1;
    }
    return { spans, offset, skipped };
  } finally {
    await handle.close();
  }
}

async function findNewline(handle: FileHandle, from: number, size: number): Promise<number> {
  const buffer = Buffer.alloc(64 * 1024);
  for (let position = from; position < size; position += buffer.length) {
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
    const index = buffer.subarray(0, bytesRead).indexOf(0x0a);
    if (index !== -1) return position + index;
  }
  return -1;
}

/**
 * Read back the lines at the given byte ranges of one events.jsonl, parsed as JSON (`undefined` where a
 * line no longer parses, or is marked gone with a negative start). Neighbouring ranges are read together.
 */
export async function readEventLines(
  path: string,
  ranges: readonly { start: number; end: number }[],
): Promise<unknown[]> {
  const out: unknown[] = new Array(ranges.length).fill(undefined);
  // A negative start marks a line that is gone (the file was rewritten): it reads as undefined.
  const order = ranges
    .map((_, index) => index)
    .filter((index) => ranges[index]!.start >= 0)
    .sort((a, b) => ranges[a]!.start - ranges[b]!.start);
  if (order.length === 0) return out;
  const handle = await openEvents(path);
  if (!handle) return out;
  try {
    let i = 0;
    while (i < order.length) {
      // Group ranges whose gaps are small: one read instead of many.
      let j = i;
      const from = ranges[order[i]!]!.start;
      let to = ranges[order[i]!]!.end;
      while (j + 1 < order.length && ranges[order[j + 1]!]!.start - to < 64 * 1024) {
        j += 1;
        to = Math.max(to, ranges[order[j]!]!.end);
      }
      const buffer = Buffer.alloc(to - from);
      await handle.read(buffer, 0, buffer.length, from);
      for (let k = i; k <= j; k++) {
        const range = ranges[order[k]!]!;
        out[order[k]!] = parseJsonLine(buffer.toString("utf8", range.start - from, range.end - from));
      }
      i = j + 1;
    }
    return out;
  } finally {
    await handle.close();
  }
}
