import { createWriteStream, fstatSync, type WriteStream } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { openTaskFile, UnsafeTaskFileError } from "../store/task-files.js";

/**
 * A task's raw.log as its conductor writes it: the agent's output as it came, setup output and caesar's own
 * notes. It knows its size (where it started, plus what was written), which the agent's output cursor
 * records, so a conductor taking the task over continues exactly where the last one's handled output ended.
 * An agent may also write into it directly (its stdout and stderr are this file: see agent-process.ts);
 * `written()` then reads the size from the file.
 */
export class RawLog {
  private constructor(
    private readonly handle: FileHandle,
    private readonly stream: WriteStream,
    private start: number,
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
    return new RawLog(handle, createWriteStream("", { fd: handle }), size);
  }

  /** The open file (appending), for an agent's output to go straight into it. */
  get fd(): number {
    return this.handle.fd;
  }

  write(chunk: string | Buffer): void {
    this.stream.write(chunk);
  }

  /**
   * Resolves with the log's size once everything written so far is on disk — its size on disk, counting
   * what an agent wrote into it directly.
   */
  written(): Promise<number> {
    return new Promise((resolve) =>
      this.stream.write("", () => {
        this.handle.stat().then(
          (stat) => {
            this.start = stat.size - this.stream.bytesWritten;
            resolve(this.size());
          },
          () => resolve(this.size()),
        );
      }),
    );
  }

  /** Write, then resolve with the log's size once it is on disk (a buffer is not copied: keep it till then). */
  append(chunk: string | Buffer): Promise<number> {
    return new Promise((resolve) => this.stream.write(chunk, () => resolve(this.size())));
  }

  /** Its size on disk now, what an agent wrote into it directly included (-1 when it cannot be read). */
  sizeOnDisk(): number {
    try {
      return fstatSync(this.handle.fd).size;
    } catch {
      return -1;
    }
  }

  size(): number {
    return this.start + this.stream.bytesWritten;
  }

  end(): Promise<void> {
    return new Promise((resolve) => this.stream.end(resolve));
  }
}
