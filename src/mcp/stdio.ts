import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

/**
 * Serve an MCP server over this process's stdin/stdout until the client goes away (stdin ends, stdout
 * breaks, or SIGTERM/SIGINT). `session` is aborted then, so tools still waiting (an `ask_orchestrator`,
 * a `caesar_await`) return at once and the process can exit. Tasks started meanwhile keep running:
 * each has its own detached conductor.
 */
export async function serveStdio(server: McpServer, session: AbortController): Promise<void> {
  const transport = new StdioServerTransport();
  let finish: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const shutdown = () => {
    if (session.signal.aborted) return;
    session.abort();
    void server.close().finally(finish);
  };
  server.server.onclose = shutdown;
  process.stdin.once("end", shutdown);
  process.stdin.once("close", shutdown);
  process.stdout.on("error", shutdown);
  const signals = ["SIGTERM", "SIGINT", "SIGHUP"] as const;
  for (const signal of signals) process.once(signal, shutdown);
  try {
    await server.connect(transport);
    await closed;
  } finally {
    for (const signal of signals) process.off(signal, shutdown);
  }
}
