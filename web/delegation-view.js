// @ts-check
// A task page's delegation: who delegated the task, what it delegated, and the whole tree it belongs to —
// live, from the workspace's stream of task summaries (a child's change shows without the task changing).
import { followWorkspace, getTaskList } from "./api.js";
import { h, replace, taskHref } from "./dom.js";
import { renderTree, treeOf } from "./task-tree.js";

/** @typedef {import("../src/api/response-schema.js").TaskSummary} TaskSummary */

/**
 * Show task `id`'s delegation in `section`, live; returns what stops it.
 * @param {HTMLElement} section
 * @param {string} id
 * @returns {() => void}
 */
export function showDelegation(section, id) {
  /** @type {Map<string, TaskSummary>} */
  const tasks = new Map();

  const render = () => {
    const task = tasks.get(id);
    if (!task) {
      replace(section);
      return;
    }
    const children = [...tasks.values()]
      .filter((other) => other.parentId === id)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    const tree = treeOf(tasks.values(), id);
    replace(
      section,
      h("h3", {}, "Delegation"),
      h(
        "p",
        { "data-testid": "parent" },
        task.parentId
          ? [
              "Delegated by ",
              h("a", { href: taskHref(task.parentId) }, task.parentId),
              ` (depth ${task.depth})`,
            ]
          : "Started by a person or a program (the root of its tree).",
      ),
      h(
        "p",
        { "data-testid": "children" },
        children.length === 0
          ? "No sub-tasks."
          : [
              `${children.length} sub-task${children.length === 1 ? "" : "s"}: `,
              children.flatMap((child, index) => [
                index > 0 ? ", " : "",
                h("a", { href: taskHref(child.id) }, child.id),
              ]),
            ],
      ),
      tree && tree.children.length > 0 ? renderTree(tree, id) : null,
    );
  };

  const reload = async () => {
    const page = await getTaskList(500);
    tasks.clear();
    for (const task of page.tasks) tasks.set(task.id, task);
    render();
  };

  return followWorkspace(
    {
      hello: () => void reload().catch(() => undefined),
      tasks: (update) => {
        for (const task of update.tasks) tasks.set(task.id, task);
        for (const removed of update.removed) tasks.delete(removed);
        render();
      },
    },
    // The page's live indicator follows the task's own stream.
    () => {},
  );
}
