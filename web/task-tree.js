// @ts-check
// Delegation trees: every task under the task that delegated it, each node with its status, agent,
// duration, checks and what it spent. Built from the task list's summaries (their parentId), so the task
// list and a task page draw the same tree, live as the summaries change.
import { h, taskHref } from "./dom.js";
import { describeChecks, describeStatus, formatDuration } from "./format.js";

/** @typedef {import("../src/api/response-schema.js").TaskSummary} TaskSummary */
/** @typedef {{ task: TaskSummary, children: TreeNode[] }} TreeNode */

/**
 * The trees among `tasks`: a task whose parent is not among them is a root. Roots newest first, children
 * in the order they were created.
 * @param {Iterable<TaskSummary>} tasks
 * @returns {TreeNode[]}
 */
export function buildTrees(tasks) {
  /** @type {Map<string, TreeNode>} */
  const nodes = new Map();
  for (const task of tasks) nodes.set(task.id, { task, children: [] });
  /** @type {TreeNode[]} */
  const roots = [];
  const byCreation = [...nodes.values()].sort((a, b) => a.task.createdAt.localeCompare(b.task.createdAt));
  for (const node of byCreation) {
    const parent = node.task.parentId ? nodes.get(node.task.parentId) : undefined;
    if (parent && !isAncestor(nodes, node.task.id, parent)) parent.children.push(node);
    else roots.push(node);
  }
  return roots.reverse();
}

/**
 * The tree holding task `id`, from its root.
 * @param {Iterable<TaskSummary>} tasks
 * @param {string} id
 * @returns {TreeNode | undefined}
 */
export function treeOf(tasks, id) {
  /** @param {TreeNode} node @returns {boolean} */
  const holds = (node) => node.task.id === id || node.children.some(holds);
  return buildTrees(tasks).find(holds);
}

/**
 * Every node of the trees, depth first, with its depth in the tree shown.
 * @param {TreeNode[]} roots
 * @returns {{ node: TreeNode, level: number }[]}
 */
export function flattenTrees(roots) {
  /** @type {{ node: TreeNode, level: number }[]} */
  const out = [];
  /** @param {TreeNode} node @param {number} level */
  const walk = (node, level) => {
    out.push({ node, level });
    for (const child of node.children) walk(child, level + 1);
  };
  for (const root of roots) walk(root, 0);
  return out;
}

/**
 * A tree as nested lists; `current` is marked.
 * @param {TreeNode} root
 * @param {string} [current]
 * @returns {HTMLUListElement}
 */
export function renderTree(root, current) {
  /** @param {TreeNode} node @returns {HTMLLIElement} */
  const item = (node) =>
    h(
      "li",
      { dataset: { taskId: node.task.id }, "data-testid": "tree-node" },
      describeNode(node.task, node.task.id === current),
      node.children.length > 0 ? h("ul", {}, node.children.map(item)) : null,
    );
  return h("ul", { class: "task-tree", "data-testid": "task-tree" }, item(root));
}

/**
 * One node: its id (a link, unless it is the page's own task), status, agent, duration, checks, spend.
 * @param {TaskSummary} task
 * @param {boolean} current
 */
function describeNode(task, current) {
  const status = describeStatus(task);
  const checks = describeChecks(task.checks);
  const spent = describeSpend(task);
  const duration = durationOf(task);
  return h(
    "span",
    { class: `tree-node${current ? " current" : ""}` },
    current ? h("strong", {}, task.id) : h("a", { href: taskHref(task.id) }, task.id),
    " ",
    h("span", { class: `badge ${status}`, "data-testid": "tree-status" }, status),
    " ",
    h("span", { class: "agent" }, task.worker ? `${task.agent}@${task.worker}` : task.agent),
    duration ? h("span", { class: "muted" }, ` ${duration}`) : null,
    checks
      ? h(
          "span",
          { class: `badge ${checks.passed ? "success" : "failed"}`, title: "caesar's checks" },
          checks.text,
        )
      : null,
    spent ? h("span", { class: "muted", "data-testid": "tree-spent" }, ` ${spent}`) : null,
    h("span", { class: "objective" }, ` ${task.objective.split("\n")[0]}`),
  );
}

/**
 * From the agent's start to its end (or now).
 * @param {TaskSummary} task
 */
function durationOf(task) {
  if (!task.startedAt) return "";
  const end = task.finishedAt ? Date.parse(task.finishedAt) : Date.now();
  return formatDuration(end - Date.parse(task.startedAt));
}

/**
 * `$0.0123 · 1.2k tok`, or "" when the agent reported nothing.
 * @param {TaskSummary} task
 */
export function describeSpend(task) {
  const parts = [];
  if (task.costUsd !== null)
    parts.push(`$${task.costUsd < 1 ? task.costUsd.toFixed(4) : task.costUsd.toFixed(2)}`);
  const tokens = (task.inputTokens ?? 0) + (task.outputTokens ?? 0);
  if (tokens > 0) parts.push(tokens >= 1000 ? `${(tokens / 1000).toFixed(1)}k tok` : `${tokens} tok`);
  return parts.join(" · ");
}

/**
 * @param {Map<string, TreeNode>} nodes
 * @param {string} id
 * @param {TreeNode} of
 */
function isAncestor(nodes, id, of) {
  /** @type {TreeNode | undefined} */
  let current = of;
  for (let steps = 0; current && steps < nodes.size; steps++) {
    if (current.task.id === id) return true;
    current = current.task.parentId ? nodes.get(current.task.parentId) : undefined;
  }
  return false;
}
