import type { AnyMessage, Stream } from "@agentclientprotocol/sdk";

/**
 * The SDK's message stream over lines the runner already split (and teed to raw.log): each stdout line
 * that is a JSON object becomes one incoming message; each outgoing message is one line for stdin. Lines
 * that are not JSON objects are skipped (an agent printing on stdout by mistake), never fatal.
 */
export class LineStream {
  readonly stream: Stream;
  /** Lines skipped because they were not JSON-RPC messages. */
  skipped = 0;
  private controller?: ReadableStreamDefaultController<AnyMessage>;
  private closed = false;

  constructor(send: (line: string) => void) {
    const readable = new ReadableStream<AnyMessage>({
      start: (controller) => {
        this.controller = controller;
      },
    });
    const writable = new WritableStream<AnyMessage>({
      write: (message) => send(JSON.stringify(message)),
    });
    this.stream = { readable, writable };
  }

  /** The agent's stdout has ended. */
  get isClosed(): boolean {
    return this.closed;
  }

  push(line: string): void {
    if (this.closed || line.trim() === "") return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      this.skipped += 1;
      return;
    }
    if (!message || typeof message !== "object" || Array.isArray(message)) {
      this.skipped += 1;
      return;
    }
    try {
      this.controller?.enqueue(message as AnyMessage);
    } catch {
      // the connection is closed: a message after the session's end has nobody to read it
    }
  }

  /** The agent's stdout ended: the connection closes and requests still pending fail. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.controller?.close();
    } catch {
      // the connection already closed its side (the session ended before the process did)
    }
  }
}
