import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** How often, in ms (CAESAR_MCP_PROGRESS_MS changes it, e.g. for a client with a short request timeout). */
function progressEvery(): number {
  const raw = Number(process.env.CAESAR_MCP_PROGRESS_MS);
  return Number.isFinite(raw) && raw >= 10 ? raw : 10_000;
}

/**
 * While a tool waits, send progress notifications when the client asked for them (a progressToken):
 * clients that reset their request timeout on progress then keep waiting as long as the tool does.
 * Returns the function that stops them.
 */
export function keepAlive(extra: ToolExtra, message: string, totalMs?: number): () => void {
  const progressToken = extra._meta?.progressToken;
  if (progressToken === undefined) return () => {};
  const started = Date.now();
  const timer = setInterval(() => {
    void extra
      .sendNotification({
        method: "notifications/progress",
        params: {
          progressToken,
          progress: Date.now() - started,
          ...(totalMs === undefined ? {} : { total: totalMs }),
          message,
        },
      })
      .catch(() => undefined);
  }, progressEvery());
  return () => clearInterval(timer);
}
