import { type ChecksVerdict, checksVerdict } from "../../protocol/checks.js";
import type { Outcome, Phase, TaskState } from "../store/state.js";

/** One task in its delegation tree, with what a person checks at a glance: status, agent, time, checks, spend. */
export interface TaskTreeNode {
  id: string;
  agent: string;
  role: string | null;
  objective: string;
  phase: Phase;
  outcome: Outcome | null;
  report_status: string | null;
  waiting_for_slot: boolean;
  parent_id: string | null;
  depth: number;
  created_at: string;
  /** From the agent's start to the end (or now); null before it started. */
  duration_ms: number | null;
  checks: ChecksVerdict;
  /** What the agent reported it spent (its budget use); null where it said nothing. */
  cost_usd: number | null;
  input_tokens: number | null;
  output_tokens: number | null;
  /** The worker a remote task runs on. */
  worker: string | null;
  children: TaskTreeNode[];
}

/**
 * The delegation trees among `states`: a task whose parent is not among them is a root (its parent may be
 * older than what is shown). Children in the order they were created.
 */
export function buildTaskTrees(states: readonly TaskState[], now = Date.now()): TaskTreeNode[] {
  const nodes = new Map(states.map((state) => [state.id, nodeOf(state, now)]));
  const roots: TaskTreeNode[] = [];
  for (const node of [...nodes.values()].sort((a, b) => a.created_at.localeCompare(b.created_at))) {
    const parent = node.parent_id ? nodes.get(node.parent_id) : undefined;
    // A damaged record naming itself (or a cycle) must not hide a task: it shows as a root.
    if (parent && !isAncestor(nodes, node.id, parent)) parent.children.push(node);
    else roots.push(node);
  }
  return roots;
}

/** The tree `id` belongs to, from its root (undefined: `id` is not among `states`). */
export function treeOfTask(
  states: readonly TaskState[],
  id: string,
  now = Date.now(),
): TaskTreeNode | undefined {
  return buildTaskTrees(states, now).find((root) => contains(root, id));
}

/** Every node of a tree, depth first. */
export function flattenTree(node: TaskTreeNode): TaskTreeNode[] {
  return [node, ...node.children.flatMap(flattenTree)];
}

function contains(node: TaskTreeNode, id: string): boolean {
  return node.id === id || node.children.some((child) => contains(child, id));
}

function isAncestor(nodes: Map<string, TaskTreeNode>, id: string, of: TaskTreeNode): boolean {
  let current: TaskTreeNode | undefined = of;
  for (let steps = 0; current && steps < nodes.size; steps++) {
    if (current.id === id) return true;
    current = current.parent_id ? nodes.get(current.parent_id) : undefined;
  }
  return false;
}

function nodeOf(state: TaskState, now: number): TaskTreeNode {
  const started = state.started_at ? Date.parse(state.started_at) : undefined;
  const ended = state.finished_at ? Date.parse(state.finished_at) : now;
  const usage = state.report?.usage ?? {};
  return {
    id: state.id,
    agent: state.agent,
    role: state.role,
    objective: state.objective,
    phase: state.phase,
    outcome: state.outcome,
    report_status: state.report_status,
    waiting_for_slot: state.waiting_for_slot !== null,
    parent_id: state.parent_id,
    depth: state.depth,
    created_at: state.created_at,
    duration_ms: started === undefined ? null : Math.max(0, ended - started),
    checks: checksVerdict(state.report?.checks),
    cost_usd: usage.cost_usd ?? null,
    input_tokens: usage.input_tokens ?? null,
    output_tokens: usage.output_tokens ?? null,
    worker: state.remote?.worker?.id ?? null,
    children: [],
  };
}
