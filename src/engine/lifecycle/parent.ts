import { findAdapter } from "../../agents/registry.js";
import type { EffectiveConfig } from "../../config/effective.js";
import type { CallerTask } from "../../policy/delegation.js";
import type { Envelope } from "../../policy/escalation.js";
import { isValidTaskId } from "../../protocol/ids.js";
import { loadPlan, type RemotePlan, type TaskPlan } from "../store/task-plan.js";
import { readState, taskDirOf } from "../store/task-store.js";
import type { ParentContext } from "./request.js";

/** The task a nested request comes from, as its own records (not its environment) describe it. */
export interface ParentTask {
  caller: CallerTask;
  /** Undefined when the parent is not in this project's store (a task of another project). */
  task?: {
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
  envelope?: Envelope;
}

export async function loadParent(
  root: string,
  context: ParentContext,
  config: EffectiveConfig,
): Promise<ParentTask> {
  const fromEnv: ParentTask = {
    caller: {
      id: context.taskId,
      agent: context.agent,
      product: context.agent,
      depth: context.depth,
      kind: "delegate",
    },
  };
  if (!isValidTaskId(context.taskId)) return fromEnv;
  const dir = taskDirOf(root, context.taskId);
  let state: Awaited<ReturnType<typeof readState>>;
  let plan: TaskPlan;
  try {
    state = await readState(dir);
    plan = await loadPlan(dir);
  } catch {
    return fromEnv;
  }
  let product = state.agent;
  try {
    product = findAdapter(config, root, state.agent).product;
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
      tools: plan.tools,
    },
  };
}
