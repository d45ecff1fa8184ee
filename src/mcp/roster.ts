import type { AgentAdapter } from "../agents/adapter.js";
import { listAdapters } from "../agents/registry.js";
import type { EffectiveConfig } from "../config/effective.js";
import { type Caller, identifyCaller } from "../engine/lifecycle/caller.js";
import { parentOf } from "../engine/lifecycle/parent.js";
import { loadCallerConfig } from "../engine/lifecycle/plan.js";
import type { CallerTask } from "../policy/delegation.js";
import { type Reach, reachOf } from "../policy/reach.js";
import type { OrchestratorContext } from "./context.js";

/** Every agent the project knows, and whether the caller reaches it now. */
export interface CallerReach {
  config: EffectiveConfig;
  /** The calling task as the delegation rules see it (none for a person). */
  asking: CallerTask | undefined;
  agents: { adapter: AgentAdapter; reach: Reach }[];
}

/**
 * Whom a caller reaches: the one answer behind caesar_list_agents and the roster in caesar_delegate's
 * `agent` description — the policy's admission for a person, and for a task the delegation rules too
 * (policy/reach.ts: the same decisions a request would meet).
 */
export async function reachOfCaller(context: OrchestratorContext, caller: Caller): Promise<CallerReach> {
  const config = await loadCallerConfig(context.root, caller, context.env);
  const asking = caller.kind === "task" ? parentOf(caller, config).caller : undefined;
  const agents = listAdapters(config, context.root).map((adapter) => ({
    adapter,
    reach: reachOf(config, asking, adapter),
  }));
  return { config, asking, agents };
}

/**
 * The agents the caller this server serves reaches, sorted: established once, when the server starts (a
 * nested server runs inside its task, with that task's credentials; a person's, at the top). Nothing is
 * asked yet, so a caller that cannot be established is not recorded as refused: it reaches nobody. Each
 * request is still decided when it comes, by who asks then.
 */
export async function rosterAtStart(context: OrchestratorContext): Promise<string[]> {
  try {
    const caller = await identifyCaller(context.root, {
      env: context.env,
      cwd: context.cwd,
      action: "mcp serve",
      record: false,
    });
    const { agents } = await reachOfCaller(context, caller);
    return agents
      .filter((agent) => agent.reach.allowed)
      .map((agent) => agent.adapter.id)
      .sort();
  } catch {
    return [];
  }
}

/** The `agent` argument's description, in the delegation reference's words (its `delegate` schema's). */
export function rosterDescription(roster: readonly string[]): string {
  return `Name of the agent to delegate to. Available: ${roster.length > 0 ? roster.join(", ") : "(none configured)"}`;
}
