import * as z from "../../support/zod.js";

/**
 * The broker's wire: what a sandboxed agent's `caesar` sends over its task's broker socket, and what comes
 * back. The first line is the request (JSON); then frames both ways, each a header line `<kind> <length>`
 * and that many bytes:
 * - to the broker: `i` stdin bytes, `c` stdin closed (length 0);
 * - from the broker: `o` stdout bytes, `e` stderr bytes, `x` the exit code (its decimal text as the
 *   bytes), after which the broker closes the connection.
 */
export const BrokerRequestSchema = z.strictObject({
  /** The command line after `caesar` (`run --agent codex "Fix it"`). */
  argv: z.array(z.string().max(1_000_000)).min(1).max(1000),
  /** The caller's working directory (inside the sandbox: the same path outside). */
  cwd: z.string().min(1).max(4096),
  /** Keep stdin open (an MCP server over stdio, a chat post reading its body). */
  stdin: z.boolean(),
});
export type BrokerRequest = z.infer<typeof BrokerRequestSchema>;

export type FrameKind = "i" | "c" | "o" | "e" | "x";

/** The longest request line and the longest frame accepted. */
export const MAX_REQUEST_BYTES = 2 * 1024 * 1024;
export const MAX_FRAME_BYTES = 1024 * 1024;

export function encodeFrame(kind: FrameKind, data: Buffer | string = ""): Buffer {
  const body = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  return Buffer.concat([Buffer.from(`${kind} ${body.length}\n`, "ascii"), body]);
}

/**
 * Parses a byte stream into the request line, then frames. Throws on anything malformed (the connection
 * is then closed): the peer is a sandboxed program, nothing it sends is trusted.
 */
export class FrameReader {
  private buffer = Buffer.alloc(0);
  private requestRead: boolean;

  constructor(expectRequest: boolean) {
    this.requestRead = !expectRequest;
  }

  /** Feed bytes; returns the request line (once) and the complete frames. */
  push(chunk: Buffer): { request?: string; frames: { kind: FrameKind; data: Buffer }[] } {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    const out: { request?: string; frames: { kind: FrameKind; data: Buffer }[] } = { frames: [] };
    if (!this.requestRead) {
      const end = this.buffer.indexOf(0x0a);
      if (end === -1) {
        if (this.buffer.length > MAX_REQUEST_BYTES) throw new Error("request line too long");
        return out;
      }
      out.request = this.buffer.subarray(0, end).toString("utf8");
      this.buffer = this.buffer.subarray(end + 1);
      this.requestRead = true;
    }
    for (;;) {
      const end = this.buffer.indexOf(0x0a);
      if (end === -1) {
        if (this.buffer.length > 32) throw new Error("frame header too long");
        return out;
      }
      const match = /^([icoex]) (\d{1,8})$/.exec(this.buffer.subarray(0, end).toString("ascii"));
      if (!match) throw new Error("malformed frame header");
      const length = Number(match[2]);
      if (length > MAX_FRAME_BYTES) throw new Error("frame too long");
      if (this.buffer.length < end + 1 + length) return out;
      out.frames.push({ kind: match[1] as FrameKind, data: this.buffer.subarray(end + 1, end + 1 + length) });
      this.buffer = this.buffer.subarray(end + 1 + length);
    }
  }
}

/**
 * The commands a sandboxed agent may run through its broker — each governed as the caller task, as
 * before: delegating, following, cancelling and answering its own sub-tasks, chatting, and the
 * orchestrator's MCP server. Everything else a sandboxed agent may run inside its sandbox (what needs
 * nothing of caesar's records), or not at all (configuration, servers, workers).
 */
export const BROKERED_COMMANDS = [
  "run",
  "race",
  "cancel",
  "answer",
  "apply",
  "status",
  "ps",
  "logs",
  "diff",
  "gc",
  "agents",
  "chat",
  "mcp",
] as const;
