import { appendFile, open, stat } from "node:fs/promises";
import { safeParseDocument } from "../../protocol/documents.js";
import type { CaesarEvent, EventBody } from "../../protocol/event.js";
import { LineBuffer, parseJsonLine } from "../../protocol/jsonl.js";
import { PROTOCOLS } from "../../protocol/versions.js";
import { errnoOf } from "../../support/errors.js";

export interface EventRead {
  events: CaesarEvent[];
  /** Byte offset just after the last complete line read (a half-written line is left for next time). */
  offset: number;
  /** Lines that were complete but not valid events (kept in the file, skipped here). */
  skipped: number;
}

/** Read the complete event lines of events.jsonl from a byte offset. Tolerant: bad lines are skipped. */
export async function readEvents(path: string, fromOffset = 0): Promise<EventRead> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, "r");
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return { events: [], offset: fromOffset, skipped: 0 };
    throw error;
  }
  try {
    const { size } = await handle.stat();
    if (size <= fromOffset) return { events: [], offset: fromOffset, skipped: 0 };
    const buffer = Buffer.alloc(size - fromOffset);
    await handle.read(buffer, 0, buffer.length, fromOffset);
    const end = buffer.lastIndexOf(0x0a);
    if (end === -1) return { events: [], offset: fromOffset, skipped: 0 };
    const text = buffer.subarray(0, end + 1).toString("utf8");
    const events: CaesarEvent[] = [];
    let skipped = 0;
    for (const line of new LineBuffer().push(text)) {
      if (line.trim() === "") continue;
      const result = safeParseDocument("event", parseJsonLine(line));
      if (result.ok) events.push(result.value);
      else skipped += 1;
    }
    return { events, offset: fromOffset + end + 1, skipped };
  } finally {
    await handle.close();
  }
}

/**
 * Appends events to a task's events.jsonl with increasing `seq`. The agent may append its own lines to
 * the same file (CAESAR_EVENTS_PATH): before each append the writer reads what others added, so its
 * sequence numbers continue after theirs.
 */
export class EventWriter {
  private nextSeq = 0;
  private seenOffset = 0;
  private lastType: string | undefined;
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

  /** Is the last event in the log (whoever wrote it) a `finished` event? */
  async endsWithFinished(): Promise<boolean> {
    await this.flush();
    await this.catchUp();
    return this.lastType === "finished";
  }

  /** Wait for every pending append. */
  async flush(): Promise<void> {
    await this.chain;
  }

  private async appendNow(body: EventBody, at?: string): Promise<CaesarEvent> {
    await this.catchUp();
    const event = {
      protocol: PROTOCOLS.event,
      seq: this.nextSeq,
      at: at ?? new Date().toISOString(),
      task_id: this.taskId,
      ...body,
    } as CaesarEvent;
    const line = `${JSON.stringify(event)}\n`;
    await appendFile(this.path, line);
    this.nextSeq += 1;
    this.lastType = event.type;
    this.seenOffset += Buffer.byteLength(line);
    return event;
  }

  private async catchUp(): Promise<void> {
    let size: number;
    try {
      size = (await stat(this.path)).size;
    } catch (error) {
      if (errnoOf(error) === "ENOENT") return;
      throw error;
    }
    if (size <= this.seenOffset) return;
    const { events, offset } = await readEvents(this.path, this.seenOffset);
    for (const event of events) {
      this.nextSeq = Math.max(this.nextSeq, event.seq + 1);
      this.lastType = event.type;
    }
    this.seenOffset = offset;
  }
}
