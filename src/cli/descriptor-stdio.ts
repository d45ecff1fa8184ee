import { fstatSync, writeSync } from "node:fs";
import { errnoOf } from "../support/errors.js";

/**
 * Standard output and error as plain writes to their descriptors, for `caesar chat` (see
 * chat-main.ts) when they are pipes, files or sockets — how agents' shell tools capture them. On
 * first use Node builds a `net.Socket` around a piped stdout, loading `net` and the stream machinery:
 * ≈ 10 ms of CPU in a process whose whole job is a few lines of output (bench/chat measures it).
 * A terminal keeps Node's own stream (colours, width).
 *
 * Writes are synchronous, as Node's own are for files and, on Linux, pipes. A write the descriptor
 * refuses for now (EAGAIN: a non-blocking pipe that is full) hands over to Node's stream, which keeps
 * the order; a closed reader (EPIPE) is an `error` event, as from Node's stream.
 */
export function useDescriptorStdio(): void {
  for (const [name, fd] of [
    ["stdout", 1],
    ["stderr", 2],
  ] as const) {
    if (!isPlainDescriptor(fd)) continue;
    const original = Object.getOwnPropertyDescriptor(process, name);
    if (original?.get === undefined || original.configurable !== true) continue;
    const nodeStream = () => original.get!.call(process) as NodeJS.WriteStream;
    Object.defineProperty(process, name, {
      configurable: true,
      enumerable: original.enumerable ?? true,
      value: new DescriptorStream(fd, () => {
        // From now on Node's stream does it all.
        Object.defineProperty(process, name, original);
        return nodeStream();
      }),
    });
  }
}

function isPlainDescriptor(fd: number): boolean {
  try {
    const stats = fstatSync(fd);
    return stats.isFIFO() || stats.isFile() || stats.isSocket();
  } catch {
    return false;
  }
}

type Listener = (...args: unknown[]) => void;

/** The part of a writable stream that caesar's output, and commander's, use. */
class DescriptorStream {
  readonly isTTY = false;
  readonly writable = true;
  private readonly listeners = new Map<string, Listener[]>();
  private delegate: NodeJS.WriteStream | undefined;

  constructor(
    readonly fd: number,
    private readonly handOver: () => NodeJS.WriteStream,
  ) {}

  write(
    chunk: string | Uint8Array,
    encoding?: BufferEncoding | (() => void),
    callback?: () => void,
  ): boolean {
    const done = typeof encoding === "function" ? encoding : callback;
    if (this.delegate) return this.delegate.write(chunk, done);
    let data =
      typeof chunk === "string"
        ? Buffer.from(chunk, typeof encoding === "string" ? encoding : "utf8")
        : chunk;
    while (data.length > 0) {
      try {
        data = data.subarray(writeSync(this.fd, data));
      } catch (error) {
        if (errnoOf(error) === "EAGAIN") return this.takeOver().write(data, done);
        if (!this.emit("error", error)) throw error;
        return false;
      }
    }
    if (done) process.nextTick(done);
    return true;
  }

  end(chunk?: string | Uint8Array, callback?: () => void): this {
    if (chunk !== undefined) this.write(chunk, callback);
    else if (callback) process.nextTick(callback);
    return this;
  }

  on(event: string, listener: Listener): this {
    if (this.delegate) this.delegate.on(event, listener);
    else this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener]);
    return this;
  }

  once(event: string, listener: Listener): this {
    const wrapped: Listener = (...args) => {
      this.off(event, wrapped);
      listener(...args);
    };
    return this.on(event, wrapped);
  }

  off(event: string, listener: Listener): this {
    this.delegate?.off(event, listener);
    this.listeners.set(
      event,
      (this.listeners.get(event) ?? []).filter((candidate) => candidate !== listener),
    );
    return this;
  }

  removeListener(event: string, listener: Listener): this {
    return this.off(event, listener);
  }

  emit(event: string, ...args: unknown[]): boolean {
    const listeners = this.listeners.get(event) ?? [];
    for (const listener of listeners) listener(...args);
    return listeners.length > 0;
  }

  private takeOver(): NodeJS.WriteStream {
    if (!this.delegate) {
      this.delegate = this.handOver();
      for (const [event, listeners] of this.listeners)
        for (const listener of listeners) this.delegate.on(event, listener);
    }
    return this.delegate;
  }
}
