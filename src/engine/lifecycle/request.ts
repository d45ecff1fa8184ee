import type { IsolationRequest, NetworkRequest } from "../../config/schema.js";
import type { Mode } from "../../protocol/task.js";

/** The parent of a nested delegation, read from the CAESAR_* environment of the calling agent. */
export interface ParentContext {
  taskId: string;
  agent: string;
  depth: number;
}

/** What a front end (CLI, MCP, HTTP) asks for, before policy resolves it into a plan. */
export interface DelegationRequest {
  objective: string;
  agent?: string;
  role?: string;
  mode?: Mode;
  isolation?: IsolationRequest;
  network?: NetworkRequest;
  timeoutMs?: number;
  model?: string;
  context?: string;
  constraints?: string[];
  acceptance?: string[];
  extraArgs?: string[];
  channel?: boolean;
  /**
   * Permission requests of an ACP agent that caesar's policy allows go to a person (a question in the
   * task directory) instead of being granted at once: set by `caesar acp`, whose editor asks its user.
   */
  askPermissions?: boolean;
  /** Commands run in the workspace after the agent exits (docs/checks.md). */
  checks?: string[];
  checkTimeoutMs?: number;
  /** Runs of the agent allowed when checks fail. */
  attempts?: number;
  /** How a second attempt reaches the agent (default: resume its session where its CLI can). */
  followUp?: "resume" | "fresh";
  parent?: ParentContext;
  /** Who asked (for records): "cli", "mcp", "http", or the parent task id. */
  requestedBy?: string;
}

/** Read the parent of a nested request from the environment of an agent running under caesar. */
export function parentFromEnv(env: NodeJS.ProcessEnv): ParentContext | undefined {
  const taskId = env.CAESAR_TASK_ID;
  if (!taskId) return undefined;
  const depth = Number.parseInt(env.CAESAR_DEPTH ?? "0", 10);
  return { taskId, agent: env.CAESAR_AGENT ?? "", depth: Number.isFinite(depth) && depth >= 0 ? depth : 0 };
}
