/** MCP servers a front end hands a task's agent for one run (the editor's, with `caesar acp`). */
import * as z from "../support/zod.js";

const pairs = z.record(z.string().max(1_000), z.string().max(100_000));

/**
 * One MCP server, as an editor gives it (ACP's `McpServer`, in caesar's words): a program over stdio, or
 * an HTTP or SSE endpoint. It runs with the person's trust: it is their configuration, never a model's.
 */
export const McpServerSchema = z.discriminatedUnion("transport", [
  z.strictObject({
    transport: z.literal("stdio"),
    name: z.string().min(1).max(200),
    command: z.string().min(1).max(4_096),
    args: z.array(z.string().max(100_000)).max(1_000),
    env: pairs,
  }),
  z.strictObject({
    transport: z.enum(["http", "sse"]),
    name: z.string().min(1).max(200),
    url: z.string().min(1).max(4_096),
    headers: pairs,
  }),
]);
export type McpServer = z.infer<typeof McpServerSchema>;
