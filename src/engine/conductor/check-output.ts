import { closeSync, mkdirSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { openTaskFileSync, UnsafeTaskFileError } from "../store/task-files.js";

/**
 * A check's log, through the one opener of task files: never truncated or written through a link the
 * agent left (to the budget ledger, to the person's files); what was there is moved aside and recorded,
 * and the log starts anew.
 */
function openLog(path: string): number {
  try {
    return openTaskFileSync(path, "write")!;
  } catch (error) {
    if (!(error instanceof UnsafeTaskFileError)) throw error;
    mkdirSync(dirname(path), { recursive: true });
    return openTaskFileSync(path, "write")!;
  }
}

/** What a check's log keeps of its output: its first bytes, then its last (what comes between is counted). */
export const CHECK_LOG_HEAD_BYTES = 256 * 1024;
export const CHECK_LOG_TAIL_BYTES = 256 * 1024;
/** How much of the end of a check's output the report quotes. */
export const CHECK_TAIL_CHARS = 4000;

/**
 * A check's output, kept bounded whatever it prints: the first CHECK_LOG_HEAD_BYTES go to its log file as
 * they come, the last CHECK_LOG_TAIL_BYTES are held in memory and appended when it ends, after a line saying
 * how much was left out. A check printing 100 MB leaves a log of about half a megabyte.
 */
export class CheckOutput {
  private readonly fd: number;
  private written = 0;
  private total = 0;
  /** The output past the head, trimmed to CHECK_LOG_TAIL_BYTES (held up to twice that between trims). */
  private tail: Buffer[] = [];
  private tailBytes = 0;
  /** The last bytes of everything (head included), for the report's quote. */
  private end = Buffer.alloc(0);
  private closed = false;

  constructor(readonly path: string) {
    this.fd = openLog(path);
  }

  /** How many bytes the check printed in all. */
  get bytes(): number {
    return this.total;
  }

  write(chunk: string | Buffer): void {
    if (this.closed) return;
    const data = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    this.total += data.length;
    this.keepEnd(data);
    let rest = data;
    if (this.written < CHECK_LOG_HEAD_BYTES) {
      const head = rest.subarray(0, CHECK_LOG_HEAD_BYTES - this.written);
      writeSync(this.fd, head);
      this.written += head.length;
      rest = rest.subarray(head.length);
    }
    if (rest.length === 0) return;
    this.tail.push(rest);
    this.tailBytes += rest.length;
    if (this.tailBytes > 2 * CHECK_LOG_TAIL_BYTES) this.trimTail();
  }

  /** Write the kept tail to the log and close it; returns the end of the output as text. */
  close(): string {
    if (!this.closed) {
      this.closed = true;
      this.trimTail();
      const tail = Buffer.concat(this.tail);
      const omitted = this.total - this.written - tail.length;
      try {
        if (omitted > 0) writeSync(this.fd, `\n[caesar: ${omitted} bytes of output not kept]\n`);
        if (tail.length > 0) writeSync(this.fd, tail);
      } finally {
        closeSync(this.fd);
      }
      this.tail = [];
    }
    const text = this.end.toString("utf8");
    const cut = text.length > CHECK_TAIL_CHARS ? text.slice(text.length - CHECK_TAIL_CHARS) : text;
    // A cut inside a multi-byte character decodes as replacement characters first: drop them.
    return cut.replace(/^\uFFFD+/, "");
  }

  private keepEnd(data: Buffer): void {
    const limit = CHECK_TAIL_CHARS * 4;
    const joined = data.length >= limit ? data : Buffer.concat([this.end, data]);
    this.end = Buffer.from(joined.subarray(Math.max(0, joined.length - limit)));
  }

  private trimTail(): void {
    if (this.tailBytes <= CHECK_LOG_TAIL_BYTES) return;
    const all = Buffer.concat(this.tail);
    this.tail = [Buffer.from(all.subarray(all.length - CHECK_LOG_TAIL_BYTES))];
    this.tailBytes = CHECK_LOG_TAIL_BYTES;
  }
}
