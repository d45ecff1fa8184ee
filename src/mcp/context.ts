import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";

/** What every tool of `caesar mcp serve` works with. */
export interface OrchestratorContext {
  /** The project root the server was started in (its tasks, its configuration). */
  root: string;
  /** The server's environment: CAESAR_TASK_ID / CAESAR_DEPTH there make its delegations nested. */
  env: NodeJS.ProcessEnv;
  /** Aborted when the MCP session ends (waits return at once; started tasks keep running). */
  session: AbortSignal;
}

export type ToolGroup = (server: McpServer, context: OrchestratorContext) => void;
