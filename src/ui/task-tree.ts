import type { TaskTreeNode } from "../engine/follow/task-tree.js";
import { formatElapsed } from "./elapsed.js";
import { describeTaskState, roleOfTaskState } from "./task-state.js";
import type { Theme } from "./theme.js";

/** The branches a tree is drawn with: UTF-8 box drawing, or ASCII in other locales. */
const UNICODE_BRANCHES = { tee: "├─ ", last: "└─ ", pipe: "│  ", none: "   " };
const ASCII_BRANCHES = { tee: "|- ", last: "`- ", pipe: "|  ", none: "   " };

export interface TreeRenderOptions {
  theme: Theme;
  /** The task to point at (`caesar status <id>`). */
  mark?: string;
  /** Longest objective shown, in characters. */
  objectiveWidth?: number;
}

/**
 * Delegation trees for a terminal, one line per task under its parent: id, state (with checks), agent,
 * duration, what it spent, objective.
 */
export function renderTaskTrees(roots: readonly TaskTreeNode[], options: TreeRenderOptions): string[] {
  const lines: string[] = [];
  for (const root of roots) drawNode(root, "", "", options, lines);
  return lines;
}

function drawNode(
  node: TaskTreeNode,
  lead: string,
  childLead: string,
  options: TreeRenderOptions,
  lines: string[],
): void {
  const { theme } = options;
  const branches = theme.unicode ? UNICODE_BRANCHES : ASCII_BRANCHES;
  lines.push(`${theme.paint("muted", lead)}${describeNode(node, options)}`);
  node.children.forEach((child, index) => {
    const last = index === node.children.length - 1;
    drawNode(
      child,
      childLead + (last ? branches.last : branches.tee),
      childLead + (last ? branches.none : branches.pipe),
      options,
      lines,
    );
  });
}

function describeNode(node: TaskTreeNode, options: TreeRenderOptions): string {
  const { theme } = options;
  const shape = { ...node, waiting: node.waiting_for_slot };
  const agent = node.worker ? `${node.agent}@${node.worker}` : node.agent;
  const parts = [
    options.mark === node.id ? theme.paint("strong", `${node.id} ${theme.marks.from}`) : node.id,
    theme.paint(roleOfTaskState(shape), describeTaskState(shape)),
    node.role ? `${agent} (${node.role})` : agent,
  ];
  if (node.duration_ms !== null) parts.push(formatElapsed(node.duration_ms));
  const spent = describeSpend(node);
  if (spent) parts.push(theme.paint("muted", spent));
  const objective = (node.objective.split("\n")[0] ?? "").trim();
  const width = options.objectiveWidth ?? 60;
  parts.push(objective.length > width ? `${objective.slice(0, width - 1)}${theme.ellipsis}` : objective);
  return parts.join("  ");
}

/** `$0.0512`, `1.2k tok`, both, or nothing when the agent reported nothing. */
function describeSpend(node: TaskTreeNode): string {
  const parts: string[] = [];
  if (node.cost_usd !== null)
    parts.push(`$${node.cost_usd < 1 ? node.cost_usd.toFixed(4) : node.cost_usd.toFixed(2)}`);
  const tokens = (node.input_tokens ?? 0) + (node.output_tokens ?? 0);
  if (tokens > 0) parts.push(tokens >= 1000 ? `${(tokens / 1000).toFixed(1)}k tok` : `${tokens} tok`);
  return parts.join(" ");
}
