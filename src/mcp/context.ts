import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { type Caller, identifyCaller } from "../engine/lifecycle/caller.js";

/** What every tool of `caesar mcp serve` works with. */
export interface OrchestratorContext {
  /** The project root the server was started in (its tasks, its configuration). */
  root: string;
  /**
   * The server's environment: a task's credentials there (CAESAR_TASK_ID with CAESAR_TASK_TOKEN) make its
   * requests nested, governed by that task's records.
   */
  env: NodeJS.ProcessEnv;
  /** The server's working directory (inside a task's worktree without credentials, it is refused). */
  cwd: string;
  /** Aborted when the MCP session ends (waits return at once; started tasks keep running). */
  session: AbortSignal;
}

export type ToolGroup = (server: McpServer, context: OrchestratorContext) => void;

/** Who calls this server's tools (established per call: a task's credentials end with the task). */
export async function callerOf(context: OrchestratorContext, action: string): Promise<Caller> {
  return identifyCaller(context.root, { env: context.env, cwd: context.cwd, action });
}
