import { findAdapter } from "../../agents/registry.js";
import type { EffectiveConfig } from "../../config/effective.js";
import type { CallerTask } from "../../policy/delegation.js";
import type { Envelope } from "../../policy/escalation.js";
import type { RemotePlan } from "../store/task-plan.js";
import type { TaskCaller } from "./caller.js";

/** The task a nested request comes from, as caesar's own records describe it (never its environment). */
export interface ParentTask {
  caller: CallerTask;
  task: {
    id: string;
    depth: number;
    worktree: string | null;
    workspace: string;
    /** The delegation tree (budget ledger) it draws from. */
    budgetTree: string;
    /** The cluster it runs in (its children go there too), if any. */
    remote: RemotePlan | null;
  };
  /** What the parent may do, for the no-escalation check of bounded children. */
  envelope: Envelope;
}

/** Describe a proven calling task for the delegation rules, from its authoritative state and plan. */
export function parentOf(caller: TaskCaller, config: EffectiveConfig): ParentTask {
  const { state, plan } = caller;
  let product = state.agent;
  try {
    product = findAdapter(config, caller.root, state.agent).product;
  } catch {
    // an agent removed from the configuration since: its id stands for its product
  }
  const left = state.deadline_at ? Date.parse(state.deadline_at) - Date.now() : plan.timeout_ms;
  return {
    caller: { id: state.id, agent: state.agent, product, depth: state.depth, kind: plan.kind },
    task: {
      id: state.id,
      depth: state.depth,
      worktree: state.worktree,
      workspace: state.workspace,
      budgetTree: plan.budget.tree ?? state.id,
      remote: plan.remote,
    },
    envelope: {
      mode: plan.mode,
      network: plan.network,
      isolation: plan.isolation,
      timeMs: Math.max(0, left),
      maxTasksPerHour: plan.budget.max_tasks_per_hour,
      maxCostPerDay: plan.budget.max_cost_per_day,
      maxActionsPerHour: plan.budget.max_actions_per_hour,
      tools: plan.tools,
    },
  };
}
