import type { Command } from "commander";
import type { TaskState } from "../../engine/store/state.js";
import { checksVerdict } from "../../protocol/checks.js";
import { formatElapsed } from "../../ui/elapsed.js";
import { type Column, renderTable } from "../../ui/table.js";
import { detectTerminal } from "../../ui/terminal.js";
import { makeTheme, type Role, roleOfStatus } from "../../ui/theme.js";
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
        .option("--all", "every task, not only running and recent ones"),
    ).action(
      handle(async (ctx) => {
        const { loadAllTasks } = await import("../../engine/store/task-store.js");
        const { concludeIfAbandoned } = await import("../../engine/lifecycle/conclude.js");
        const wanted = ctx.options.status as string | undefined;
        if (wanted && !STATUSES.includes(wanted)) {
          const { UsageError } = await import("../../support/errors.js");
          throw new UsageError("invalid_option", `--status ${wanted} is not one of ${STATUSES.join(", ")}.`);
        }
        const records = await loadAllTasks(ctx.root);
        const states: TaskState[] = [];
        for (const record of records) states.push(await concludeIfAbandoned(record, "ps"));
        const now = Date.now();
        const shown = states.filter((state) => {
          if (wanted) return matches(state, wanted);
          if (ctx.options.all) return true;
          return (
            state.phase !== "finished" || now - Date.parse(state.finished_at ?? state.updated_at) < RECENT_MS
          );
        });
        ctx.out.result(
          shown.map((s) => ({
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
            checks: checksVerdict(s.report?.checks),
          })),
          () => renderPs(shown, now),
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

export function describeState(state: TaskState): string {
  if (state.phase !== "finished") return state.waiting_for_slot ? "waiting" : state.phase;
  const verdict = checksVerdict(state.report?.checks);
  const checks = verdict.state === "none" ? "" : `, checks ${verdict.passed}/${verdict.total}`;
  if (state.outcome === "succeeded") return `${state.report_status ?? "done"}${checks}`;
  return `${state.outcome ?? "failed"}${state.report_status && state.report_status !== "failed" ? `/${state.report_status}` : ""}`;
}

/** The role that classifies a task's state in the table (running, a report status, an outcome). */
function roleOfState(state: TaskState): Role | undefined {
  if (state.phase !== "finished")
    return state.waiting_for_slot || state.phase === "queued" ? "muted" : "active";
  if (state.outcome !== "succeeded") return roleOfStatus(state.outcome);
  return roleOfStatus(state.report_status);
}

function renderPs(states: TaskState[], now: number): string {
  if (states.length === 0)
    return 'No tasks. Start one with: caesar run --agent reference "create hello.txt containing hi"';
  const capabilities = detectTerminal(process.stdout);
  const theme = makeTheme(capabilities);
  const columns: Column[] = [
    { header: "ID" },
    { header: "STATE" },
    { header: "AGENT" },
    { header: "AGE", align: "right" },
    { header: "OBJECTIVE", flex: true },
  ];
  const rows = states.map((s) => [
    s.id,
    { text: describeState(s), role: roleOfState(s) },
    s.agent,
    formatElapsed(now - Date.parse(s.created_at)),
    s.objective.split("\n")[0]!,
  ]);
  // A frame on a terminal; plain aligned columns in a pipe, where grep and cut read them.
  return renderTable(columns, rows, {
    theme,
    width: capabilities.isTTY ? (capabilities.width ?? 80) : Number.POSITIVE_INFINITY,
    frame: capabilities.isTTY,
  }).join("\n");
}
