import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";
import { type CaesarAgentOptions, createCaesarAgent } from "./agent-server.js";

/**
 * Speak ACP on this process's stdin/stdout until the editor goes away (stdin ends, or SIGTERM/SIGINT).
 * Tasks started meanwhile keep running under their own conductors, findable with `caesar ps`.
 */
export async function serveAcpStdio(options: Omit<CaesarAgentOptions, "closed">): Promise<void> {
  const closed = new AbortController();
  const app = createCaesarAgent({ ...options, closed: closed.signal });
  const connection = app.connect(
    acp.ndJsonStream(
      Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
      Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
    ),
  );
  const close = () => connection.close();
  const signals = ["SIGTERM", "SIGINT", "SIGHUP"] as const;
  for (const signal of signals) process.once(signal, close);
  process.stdout.on("error", close);
  try {
    await connection.closed;
  } finally {
    closed.abort();
    for (const signal of signals) process.off(signal, close);
  }
}
