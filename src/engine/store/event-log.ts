import type { FileHandle } from "node:fs/promises";
import { formatProblem, safeParseDocument } from "../../protocol/documents.js";
import type { CaesarEvent, EventBody } from "../../protocol/event.js";
import { LineBuffer, parseJsonLine } from "../../protocol/jsonl.js";
import { PROTOCOLS } from "../../protocol/versions.js";
import { appendTaskText, openTaskFileOrNothing } from "./task-files.js";

export interface EventRead {
  events: CaesarEvent[];
  /** Byte offset just after the last complete line read (a half-written line is left for next time). */
  offset: number;
  /** Complete lines read (blank ones included): add to the first line's number for the next read. */
  lines: number;
  /** Lines that were complete but not valid events (kept in the file, skipped here). */
  skipped: number;
  /** Why each skipped line was refused, so a reader can say so instead of skipping in silence. */
  rejected: RejectedLine[];
}

export interface RejectedLine {
  /** Line number in the file (1-based, counted from `firstLine`). */
  line: number;
  /** A version of caesar.event this caesar does not read (the protocol says: refuse it, explicitly). */
  unsupported: boolean;
  problem: string;
}

const EMPTY = { events: [], lines: 0, skipped: 0, rejected: [] };

/**
 * Read the complete event lines of events.jsonl from a byte offset (`firstLine`: the number of the line
 * that starts there). Tolerant: a line that is not a valid event is skipped, and said in `rejected`.
 */
export async function readEvents(path: string, fromOffset = 0, firstLine = 1): Promise<EventRead> {
  const handle = await openEvents(path);
  if (!handle) return { ...EMPTY, offset: fromOffset };
  try {
    const { size } = await handle.stat();
    const read: EventRead = { ...EMPTY, events: [], rejected: [], offset: fromOffset };
    // A window at a time, at most READ_AT_ONCE in one call (the agent writes this file: it may be huge, or
    // sparse): a follower goes on from `offset`; a line longer than a window is skipped, and said.
    let skipping = false;
    while (read.offset < size && read.offset - fromOffset < READ_AT_ONCE) {
      const buffer = Buffer.alloc(Math.min(WINDOW, size - read.offset));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, read.offset);
      let chunk = buffer.subarray(0, bytesRead);
      const end = chunk.lastIndexOf(0x0a);
      if (end === -1) {
        if (bytesRead < WINDOW) break; // the last line, still being written
        if (!skipping) reject(read, firstLine, `a line longer than ${WINDOW / 2 ** 20} MiB: skipped`);
        skipping = true;
        read.offset += bytesRead;
        continue;
      }
      chunk = chunk.subarray(0, end + 1);
      read.offset += end + 1;
      if (skipping) {
        // The rest of the long line, up to its end: part of the line already said.
        chunk = chunk.subarray(chunk.indexOf(0x0a) + 1);
        read.lines += 1;
        skipping = false;
      }
      parseLines(chunk.toString("utf8"), firstLine + read.lines, read);
    }
    read.skipped = read.rejected.length;
    return read;
  } finally {
    await handle.close();
  }
}

/** How much of events.jsonl one read takes in: a window at a time, at most READ_AT_ONCE per call. */
const WINDOW = 16 * 2 ** 20;
const READ_AT_ONCE = 64 * 2 ** 20;

function reject(read: EventRead, line: number, problem: string): void {
  read.rejected.push({ line: line + read.lines, unsupported: false, problem });
}

/** Parse complete lines (`text` ends with a newline) into `read`, numbering from `firstLine`. */
function parseLines(text: string, firstLine: number, read: EventRead): void {
  const lines = new LineBuffer().push(text);
  lines.forEach((line, index) => {
    if (line.trim() === "") return;
    const raw = parseJsonLine(line);
    const result = safeParseDocument("event", raw);
    if (result.ok) {
      read.events.push(result.value);
      return;
    }
    const glued = gluedEvent(line);
    if (glued) read.events.push(glued);
    read.rejected.push({
      line: firstLine + index,
      unsupported: glued ? false : result.unsupported,
      problem: glued
        ? "an unterminated line, with an event glued after it: the event is read, the rest skipped"
        : raw === undefined
          ? "not JSON"
          : result.problems.map(formatProblem).join("; "),
    });
  });
  read.lines += lines.length;
}

/** How every event caesar writes begins (its first key), to find one glued after another writer's half line. */
const EVENT_START = `{"protocol":"${PROTOCOLS.event}"`;

/**
 * An event glued after an unterminated line: another writer (the agent) appended half a line just before
 * caesar appended its event — between caesar looking at the file's end and writing, which no writer can
 * rule out without a lock the agent does not take. The half line is still skipped (and said); the event
 * after it is kept.
 */
function gluedEvent(line: string): CaesarEvent | undefined {
  const at = line.lastIndexOf(EVENT_START);
  if (at <= 0) return undefined;
  const result = safeParseDocument("event", parseJsonLine(line.slice(at)));
  return result.ok ? result.value : undefined;
}

/** events.jsonl to read: no cap (it grows as long as the task runs, and is read from an offset). */
export function openEvents(path: string): Promise<FileHandle | undefined> {
  // Anything but a regular file was moved aside unopened (and recorded): no events to read yet, and
  // caesar's next line starts the file again.
  return openTaskFileOrNothing(path, "read", { maxBytes: Number.MAX_SAFE_INTEGER });
}

/** A rejected line in words, for a person: `line 7: unsupported protocol version "caesar.event/v2"…`. */
export function describeRejectedLine(rejected: RejectedLine): string {
  return `line ${rejected.line} ${rejected.unsupported ? "refused" : "skipped"}: ${rejected.problem}`;
}

/** The largest `seq` of another writer's that caesar's numbering follows (2^31: more events than any task). */
const MAX_FOLLOWED_SEQ = 2 ** 31;

/**
 * Appends events to a task's events.jsonl with increasing `seq`. The agent may append its own lines to
 * the same file (CAESAR_EVENTS_PATH): before each append the writer reads what others added, so its
 * sequence numbers continue after theirs.
 */
export class EventWriter {
  private nextSeq = 0;
  private seenOffset = 0;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly path: string,
    private readonly taskId: string,
  ) {}

  /** Append an event; `at` keeps the time it happened elsewhere (an event mirrored from a worker). */
  append(body: EventBody, at?: string): Promise<CaesarEvent> {
    const result = this.chain.then(() => this.appendNow(body, at));
    this.chain = result.catch(() => undefined);
    return result;
  }

  /** The `seq` the next append takes (after every line appended so far, whoever wrote it). */
  async nextSequence(): Promise<number> {
    await this.flush();
    await this.catchUp();
    return this.nextSeq;
  }

  /** The types of the events from `seq` on that carry exactly this `at` (caesar's own last events). */
  async typesWrittenAt(seq: number, at: string): Promise<Set<string>> {
    await this.flush();
    const { events } = await readEvents(this.path);
    return new Set(events.filter((event) => event.seq >= seq && event.at === at).map((event) => event.type));
  }

  /** Wait for every pending append. */
  async flush(): Promise<void> {
    await this.chain;
  }

  private async appendNow(body: EventBody, at?: string): Promise<CaesarEvent> {
    const size = await this.catchUp();
    const event = {
      protocol: PROTOCOLS.event,
      seq: this.nextSeq,
      at: at ?? new Date().toISOString(),
      task_id: this.taskId,
      ...body,
    } as CaesarEvent;
    // An agent killed mid-line (or one that writes no newline) leaves its last line unterminated: it is
    // ended first, so caesar's event stays a line of its own (the broken one is skipped, and said so).
    const unterminated = size > this.seenOffset;
    const line = `${unterminated ? "\n" : ""}${JSON.stringify(event)}\n`;
    await appendTaskText(this.path, line);
    this.nextSeq += 1;
    this.seenOffset = Math.max(this.seenOffset, size) + Buffer.byteLength(line);
    return event;
  }

  /** Read what others appended since; returns the file's size (its last line may be incomplete). */
  private async catchUp(): Promise<number> {
    const handle = await openEvents(this.path);
    if (!handle) return 0;
    const size = await handle
      .stat()
      .then((stats) => stats.size)
      .finally(() => handle.close());
    if (size <= this.seenOffset) return size;
    const { events, offset } = await readEvents(this.path, this.seenOffset);
    for (const event of events) {
      // An agent's numbers beyond any real count are not followed: one line claiming seq 2^53 would push
      // caesar's own past what a number can hold, and its records past what they accept.
      if (event.seq < MAX_FOLLOWED_SEQ) this.nextSeq = Math.max(this.nextSeq, event.seq + 1);
    }
    this.seenOffset = offset;
    return size;
  }
}
