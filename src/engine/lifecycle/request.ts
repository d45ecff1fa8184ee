import type { IsolationRequest, NetworkRequest } from "../../config/schema.js";
import type { Mode } from "../../protocol/task.js";

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
  /** Where to run: NATS server URL(s) of a pool of workers, or "local"; absent: `[cluster] nats` decides. */
  on?: string;
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
  /**
   * Which front end asked (for records): "cli", "mcp", "http"… A nested request is recorded as asked by
   * its parent task, whatever this says. (The parent itself is never part of a request: it is proven by
   * the caller's credentials — see caller.ts.)
   */
  requestedBy?: string;
}
