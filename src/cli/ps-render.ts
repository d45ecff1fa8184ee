import type { TaskState } from "../engine/store/state.js";
import { checksVerdict } from "../protocol/checks.js";
import { formatElapsed } from "../ui/elapsed.js";
import { type Column, renderTable } from "../ui/table.js";
import { detectTerminal } from "../ui/terminal.js";
import { makeTheme, type Role, roleOfStatus } from "../ui/theme.js";

/** A task's state in one word or two: its phase while it runs, then its report status or outcome. */
function describeState(state: TaskState): string {
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

/** `caesar ps` for people: one line per task, framed on a terminal. */
export function renderPs(states: TaskState[], now: number): string {
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
  // Where remote tasks run, when any is shown: `agent@worker` (or `agent@queue` while none took it).
  const rows = states.map((s) => [
    s.id,
    { text: describeState(s), role: roleOfState(s) },
    s.remote ? `${s.agent}@${s.remote.worker?.id ?? "queue"}` : s.agent,
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
