import type { Command } from "commander";
import type { TaskState } from "../../engine/store/state.js";
import { checksVerdict } from "../../protocol/checks.js";
import { type CommandDefinition, handle, withCommonOptions } from "../command.js";

const STATUSES = [
  "queued",
  "running",
  "finished",
  "succeeded",
  "failed",
  "cancelled",
  "timed_out",
  "success",
  "partial",
  "blocked",
];
const RECENT_MS = 24 * 3_600_000;

export const psCommand: CommandDefinition = {
  name: "ps",
  group: "follow",
  define(program: Command) {
    return withCommonOptions(
      program
        .command("ps")
        .description("running tasks and the recent ones (last 24 h)")
        .option(
          "--status <status>",
          `only tasks in this phase/outcome/report status (${STATUSES.join(", ")})`,
        )
        .option("--all", "every task, not only running and recent ones")
        .option("--tree", "each delegation tree: every task under the task that delegated it"),
    ).action(
      handle(async (ctx) => {
        const { loadAllTasks } = await import("../../engine/store/task-store.js");
        const { recoverTask } = await import("../../engine/lifecycle/recover.js");
        const wanted = ctx.options.status as string | undefined;
        if (wanted && !STATUSES.includes(wanted)) {
          const { UsageError } = await import("../../support/errors.js");
          throw new UsageError("invalid_option", `--status ${wanted} is not one of ${STATUSES.join(", ")}.`);
        }
        const records = await loadAllTasks(ctx.root);
        const states: TaskState[] = [];
        for (const record of records) states.push(await recoverTask(record, "ps"));
        const now = Date.now();
        const shown = states.filter((state) => {
          if (wanted) return matches(state, wanted);
          if (ctx.options.all) return true;
          return (
            state.phase !== "finished" || now - Date.parse(state.finished_at ?? state.updated_at) < RECENT_MS
          );
        });
        // What cannot be read is said, never hidden, and never fatal for the rest.
        const { listIncompleteTasks, listUnreadableTasks } = await import(
          "../../engine/lifecycle/incomplete.js"
        );
        const problems = ctx.options.all
          ? [
              ...(await listUnreadableTasks(ctx.root)).map((task) => ({
                id: task.id,
                problem: `unreadable: ${task.reason}`,
              })),
              ...(await listIncompleteTasks(ctx.root)).map((task) => ({
                id: task.id,
                problem: task.abandoned
                  ? "never fully created (its front end died while creating it): `caesar gc` takes it back"
                  : "being created",
              })),
            ]
          : [];
        if (ctx.options.tree) {
          const { buildTaskTrees } = await import("../../engine/follow/task-tree.js");
          const { renderTaskTrees } = await import("../../ui/task-tree.js");
          const { themeFor } = await import("../../ui/theme.js");
          // A tree is shown whole from its root, even where its root is older than what ps lists.
          const byId = new Map(states.map((state) => [state.id, state]));
          const withAncestors = new Map(shown.map((state) => [state.id, state]));
          for (const state of shown) {
            let parent = state.parent_id ? byId.get(state.parent_id) : undefined;
            while (parent && !withAncestors.has(parent.id)) {
              withAncestors.set(parent.id, parent);
              parent = parent.parent_id ? byId.get(parent.parent_id) : undefined;
            }
          }
          const trees = buildTaskTrees([...withAncestors.values()], now);
          ctx.out.result({ trees, problems }, () =>
            [
              ...(trees.length > 0
                ? renderTaskTrees(trees, { theme: themeFor(process.stdout) })
                : ["No tasks."]),
              ...problems.map((task) => `${task.id}  ${task.problem}`),
            ].join("\n"),
          );
          return;
        }
        const { renderPs } = await import("../ps-render.js");
        const { describeService, readServiceStatus } = await import("../service-line.js");
        const service = ctx.json ? null : await readServiceStatus(ctx.root);
        const rows: Record<string, unknown>[] = [
          ...shown.map((s) => ({
            id: s.id,
            phase: s.phase,
            outcome: s.outcome,
            report_status: s.report_status,
            agent: s.agent,
            role: s.role,
            mode: s.mode,
            isolation: s.isolation,
            created_at: s.created_at,
            objective: s.objective,
            parent_id: s.parent_id,
            depth: s.depth,
            worker: s.remote?.worker?.id ?? null,
            checks: checksVerdict(s.report?.checks),
          })),
          ...problems.map((task) => ({ id: task.id, phase: null, problem: task.problem })),
        ];
        ctx.out.result(rows, () =>
          [
            renderPs(shown, now),
            ...problems.map((task) => `${task.id}  ${task.problem}`),
            `service  ${describeService(service)}`,
          ].join("\n"),
        );
      }),
    );
  },
};

function matches(state: TaskState, wanted: string): boolean {
  return (
    state.phase === wanted ||
    state.outcome === wanted ||
    state.report_status === wanted ||
    (wanted === "running" && state.phase !== "finished" && state.phase !== "queued")
  );
}
