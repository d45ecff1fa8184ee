// @ts-check
// The list of tasks, kept live from /api/stream: one row per task, newest change first.
import { errorText, followWorkspace, getTaskList, mutate } from "./api.js";
import { h, replace, taskHref } from "./dom.js";
import { describeChecks, describeStatus, formatAge } from "./format.js";
import { buildTrees, describeSpend, flattenTrees } from "./task-tree.js";

/** @typedef {import("./api.js").Basis} Basis */
/** @typedef {import("./api.js").StreamStatus} StreamStatus */
/** @typedef {import("../src/api/response-schema.js").TaskSummary} TaskSummary */

/**
 * Show the task list in `view`, live; returns what stops it.
 * @param {HTMLElement} view
 * @param {(state: StreamStatus) => void} status
 * @returns {() => void}
 */
export function showTaskList(view, status) {
  /** @type {Map<string, TaskSummary>} */
  const tasks = new Map();
  /** @type {Basis | undefined} the run and revision of the last snapshot or update, once one came */
  let basis;
  const body = h("tbody", { "data-testid": "task-rows" });
  const empty = h(
    "p",
    { class: "muted", hidden: true },
    "No tasks yet. Start one below, or with `caesar run`.",
  );
  const note = h("p", { class: "note", "data-testid": "delegate-result", role: "status" });

  const objective = h("textarea", {
    name: "objective",
    rows: "2",
    required: true,
    placeholder: 'create hello.txt containing "hi"',
    "data-testid": "delegate-objective",
  });
  const agent = h("input", { name: "agent", value: "reference", "data-testid": "delegate-agent" });
  const form = h(
    "form",
    {
      class: "delegate",
      onsubmit: async (event) => {
        event.preventDefault();
        if (!basis) {
          note.textContent = "Not connected to the server yet: try again in a moment.";
          return;
        }
        note.textContent = "Starting…";
        try {
          const response = await mutate(
            "task.delegate",
            { objective: objective.value, agent: agent.value || undefined },
            basis,
          );
          note.textContent = `Started ${response.result.taskId} (change #${response.result.changeNumber}).`;
          objective.value = "";
        } catch (error) {
          note.textContent = errorText(error);
        }
      },
    },
    h("label", {}, "Objective ", objective),
    h("label", {}, "Agent ", agent),
    h("button", { type: "submit", "data-testid": "delegate-submit" }, "Delegate"),
  );

  replace(
    view,
    h("h2", {}, "Tasks"),
    empty,
    h(
      "table",
      { class: "tasks" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ["#", "Task", "Agent", "Status", "Checks", "Spent", "Objective", "Questions", "Created"].map(
            (title) => h("th", {}, title),
          ),
        ),
      ),
      body,
    ),
    h("h3", {}, "Delegate a task"),
    form,
    note,
  );

  const render = () => {
    // Each delegation tree together: a task right under the one that delegated it, indented.
    const rows = flattenTrees(buildTrees(tasks.values()));
    empty.hidden = rows.length > 0;
    replace(
      body,
      rows.map(({ node: { task }, level }) =>
        h(
          "tr",
          {
            dataset: { taskId: task.id, status: describeStatus(task), level: String(level) },
            "data-testid": "task-row",
          },
          h("td", {}, task.changeNumber ?? ""),
          h(
            "td",
            {},
            level > 0
              ? h(
                  "span",
                  { class: "tree-indent", title: `delegated by ${task.parentId}` },
                  `${"\u00a0\u00a0".repeat(level - 1)}└\u00a0`,
                )
              : null,
            h("a", { href: taskHref(task.id) }, task.id),
          ),
          // A remote task shows the worker it runs on (docs/cluster.md).
          h("td", {}, task.worker ? `${task.agent}@${task.worker}` : task.agent),
          h("td", {}, h("span", { class: `badge ${describeStatus(task)}` }, describeStatus(task))),
          h("td", { "data-testid": "task-checks" }, checksBadge(task.checks)),
          h("td", { class: "muted", "data-testid": "task-spent" }, describeSpend(task)),
          h("td", { class: "objective" }, task.objective.split("\n")[0]),
          h(
            "td",
            {},
            task.pendingQuestions > 0
              ? h("span", { class: "badge question" }, `${task.pendingQuestions} waiting`)
              : "",
          ),
          h("td", { title: task.createdAt }, formatAge(task.createdAt)),
        ),
      ),
    );
  };

  /** @param {TaskSummary["checks"]} checks */
  const checksBadge = (checks) => {
    const shown = describeChecks(checks);
    return shown
      ? h(
          "span",
          { class: `badge ${shown.passed ? "success" : "failed"}`, title: "caesar's checks" },
          shown.text,
        )
      : "";
  };

  const reload = async () => {
    const page = await getTaskList(200);
    basis = { runId: page.runId, revision: page.revision };
    tasks.clear();
    for (const task of page.tasks) tasks.set(task.id, task);
    render();
  };

  return followWorkspace(
    {
      // Every (re)connection starts with hello: take a fresh snapshot, then apply updates as they come.
      hello: () => void reload().catch(() => undefined),
      tasks: (update) => {
        basis = { runId: update.runId, revision: update.revision };
        for (const task of update.tasks) tasks.set(task.id, task);
        for (const id of update.removed) tasks.delete(id);
        render();
      },
    },
    status,
  );
}
