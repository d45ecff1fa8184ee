import { closeSync, constants, openSync, writeSync } from "node:fs";
import { type FileHandle, open, readFile } from "node:fs/promises";
import { join } from "node:path";
import { ChangeWatch } from "../store/change-watch.js";

/**
 * The files of one run (turn) of an agent: its stdout and stderr as it wrote them, the exit status its
 * keeper wrote (agent-process.ts), and how far a conductor has handled the output (the cursor) — or, for an
 * agent whose output went straight into raw.log (`direct`, present then), none of its output.
 */
export interface AgentFiles {
  dir: string;
  stdout: string;
  stderr: string;
  exit: string;
  cursor: string;
  direct: string;
}

export function agentFiles(dir: string, turn: number): AgentFiles {
  return {
    dir,
    stdout: join(dir, `${turn}.out`),
    stderr: join(dir, `${turn}.err`),
    exit: join(dir, `${turn}.exit`),
    cursor: join(dir, `${turn}.cursor`),
    direct: join(dir, `${turn}.direct`),
  };
}

/**
 * How far the output has been handled: bytes of each stream whose text is in raw.log and whose events are
 * appended, and raw.log's size just after them. A conductor that takes the agent over starts there.
 */
export interface OutputCursor {
  stdout: number;
  stderr: number;
  raw: number;
}

export type OutputStream = "stdout" | "stderr";

/**
 * Where the output goes (the conductor's raw.log and stream translator), as the bytes the agent wrote: a
 * chunk is lent for the call (and, for `consume`, until its promise settles), then its buffer is reused.
 */
export interface OutputSink {
  /** Handle a chunk; resolves with raw.log's size once it is written there and its events are appended. */
  consume(stream: OutputStream, bytes: Buffer): Promise<number>;
  /** A chunk a previous conductor handled already: rebuild what is derived from it, write nothing. */
  replay(stream: OutputStream, bytes: Buffer): void;
  /** The output is complete (lines left without a newline are the last ones). */
  end(): Promise<void>;
}

/**
 * A read's size: small while the agent writes little, growing (doubling while reads fill it) to the largest
 * during a flood, whose cost is then a read and a write per MiB rather than per 64 KiB; back to the smallest
 * once the reader has caught up, so a service with many quiet tasks holds 64 KiB for each.
 */
const MIN_CHUNK_BYTES = 64 * 1024;
const MAX_CHUNK_BYTES = 1024 * 1024;
/** The cursor file: three numbers, rewritten in place at its start, padded to a fixed size. */
const CURSOR_BYTES = 64;

interface StreamState {
  name: OutputStream;
  path: string;
  handle?: FileHandle;
  offset: number;
}

/**
 * Reads an agent's output files as they grow, in bounded chunks (a flood never holds more than a chunk per
 * stream in memory), hands each chunk to the sink, then moves the cursor past it — one small write in
 * place, so a conductor killed at any point leaves a cursor no further than what it handled.
 */
export class OutputReader {
  private readonly streams: StreamState[];
  private raw: number;
  private cursorFd: number | undefined;
  private readonly watch: ChangeWatch;
  private buffer = Buffer.allocUnsafe(MIN_CHUNK_BYTES);

  constructor(
    private readonly files: AgentFiles,
    private readonly sink: OutputSink,
    cursor: OutputCursor,
  ) {
    this.streams = [
      { name: "stdout", path: files.stdout, offset: cursor.stdout },
      { name: "stderr", path: files.stderr, offset: cursor.stderr },
    ];
    this.raw = cursor.raw;
    this.watch = new ChangeWatch(files.dir, { pollMs: 250 });
  }

  /** Replay what the cursor says was handled already (an adopted agent). */
  async replay(): Promise<void> {
    for (const stream of this.streams) {
      const handle = await this.handleOf(stream);
      let position = 0;
      while (handle && position < stream.offset) {
        const want = Math.min(this.buffer.length, stream.offset - position);
        const { bytesRead } = await handle.read(this.buffer, 0, want, position);
        if (bytesRead === 0) break;
        position += bytesRead;
        this.sink.replay(stream.name, this.buffer.subarray(0, bytesRead));
        this.resize(bytesRead);
      }
    }
  }

  /** Read and hand on output until `stop()` is true and nothing is left to read. */
  async readUntil(stop: () => boolean): Promise<void> {
    for (;;) {
      if (await this.readOnce()) continue;
      if (stop()) {
        if (await this.readOnce()) continue;
        return;
      }
      await this.watch.next(250);
    }
  }

  /** Read what is left, then end the sink. */
  async drain(): Promise<void> {
    while (await this.readOnce()) {}
    await this.sink.end();
  }

  /** Look again now (the keeper exited). */
  wake(): void {
    this.watch.poke();
  }

  close(): void {
    this.watch.close();
    for (const stream of this.streams) void stream.handle?.close().catch(() => undefined);
    if (this.cursorFd !== undefined) closeSync(this.cursorFd);
    this.cursorFd = undefined;
  }

  private async readOnce(): Promise<boolean> {
    let any = false;
    for (const stream of this.streams) {
      const handle = await this.handleOf(stream);
      if (!handle) continue;
      const { bytesRead } = await handle.read(this.buffer, 0, this.buffer.length, stream.offset);
      if (bytesRead === 0) continue;
      any = true;
      this.raw = await this.sink.consume(stream.name, this.buffer.subarray(0, bytesRead));
      stream.offset += bytesRead;
      this.writeCursor();
      this.resize(bytesRead);
    }
    return any;
  }

  /** A full read: the next one may take more; a short one (the reader caught up): back to the smallest. */
  private resize(bytesRead: number): void {
    const size = this.buffer.length;
    if (bytesRead === size && size < MAX_CHUNK_BYTES) this.buffer = Buffer.allocUnsafe(size * 2);
    else if (bytesRead < size && size > MIN_CHUNK_BYTES && bytesRead < MIN_CHUNK_BYTES)
      this.buffer = Buffer.allocUnsafe(MIN_CHUNK_BYTES);
  }

  private async handleOf(stream: StreamState): Promise<FileHandle | undefined> {
    if (stream.handle) return stream.handle;
    try {
      // Never through a link: the files are caesar's, in its control directory.
      stream.handle = await open(stream.path, constants.O_RDONLY | constants.O_NOFOLLOW);
    } catch {
      return undefined;
    }
    return stream.handle;
  }

  private writeCursor(): void {
    this.cursorFd ??= openSync(this.files.cursor, "w", 0o600);
    const [stdout, stderr] = this.streams;
    const text = `${stdout!.offset} ${stderr!.offset} ${this.raw}`.padEnd(CURSOR_BYTES - 1);
    writeSync(this.cursorFd, `${text}\n`, 0);
  }
}

/** The cursor a conductor left (undefined when it left none: no output was handled yet). */
export async function readCursor(path: string): Promise<OutputCursor | undefined> {
  const text = await readFile(path, "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  const [stdout, stderr, raw] = text.trim().split(/\s+/).map(Number);
  const valid = (value: number | undefined): number =>
    value !== undefined && Number.isSafeInteger(value) && value >= 0 ? value : 0;
  return { stdout: valid(stdout), stderr: valid(stderr), raw: valid(raw) };
}
