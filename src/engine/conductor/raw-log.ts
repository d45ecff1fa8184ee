import { createWriteStream, type WriteStream } from "node:fs";
import { openTaskFile, UnsafeTaskFileError } from "../store/task-files.js";

/**
 * A task's raw.log as its conductor writes it: the agent's output as it came, setup output and caesar's own
 * notes. It knows its size (where it started, plus what was written), which the agent's output cursor
 * records, so a conductor taking the task over continues exactly where the last one's handled output ended.
 */
export class RawLog {
  private constructor(
    private readonly stream: WriteStream,
    private readonly start: number,
  ) {}

  /** Open for appending; `cutTo` first cuts off what a conductor that died wrote past its cursor. */
  static async open(path: string, cutTo?: number): Promise<RawLog> {
    // Through the one opener of task files (no link followed, no FIFO waited on); a raw.log that was not
    // a regular file was moved aside and recorded, and a new one is started.
    const handle = (await openTaskFile(path, "append").catch((error: unknown) => {
      if (error instanceof UnsafeTaskFileError) return openTaskFile(path, "append");
      throw error;
    }))!;
    let size = (await handle.stat()).size;
    if (cutTo !== undefined && size > cutTo) {
      await handle.truncate(cutTo);
      size = cutTo;
    }
    return new RawLog(createWriteStream("", { fd: handle }), size);
  }

  write(chunk: string | Buffer): void {
    this.stream.write(chunk);
  }

  /** Resolves with the log's size once everything written so far is on disk. */
  written(): Promise<number> {
    return new Promise((resolve) => this.stream.write("", () => resolve(this.size())));
  }

  /** Write, then resolve with the log's size once it is on disk (a buffer is not copied: keep it till then). */
  append(chunk: string | Buffer): Promise<number> {
    return new Promise((resolve) => this.stream.write(chunk, () => resolve(this.size())));
  }

  size(): number {
    return this.start + this.stream.bytesWritten;
  }

  end(): Promise<void> {
    return new Promise((resolve) => this.stream.end(resolve));
  }
}
