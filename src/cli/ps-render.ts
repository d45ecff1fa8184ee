import type { TaskState } from "../engine/store/state.js";
import { checksVerdict } from "../protocol/checks.js";
import { formatElapsed } from "../ui/elapsed.js";
import { type Column, renderTable } from "../ui/table.js";
import { describeTaskState, roleOfTaskState, type TaskStateShape } from "../ui/task-state.js";
import { detectTerminal } from "../ui/terminal.js";
import { makeTheme } from "../ui/theme.js";

function shapeOf(state: TaskState): TaskStateShape {
  return {
    phase: state.phase,
    waiting: state.waiting_for_slot !== null,
    outcome: state.outcome,
    report_status: state.report_status,
    checks: checksVerdict(state.report?.checks),
  };
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
    { text: describeTaskState(shapeOf(s)), role: roleOfTaskState(shapeOf(s)) },
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
