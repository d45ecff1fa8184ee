import type { ToolLists } from "../agents/adapter.js";
import type { Mode } from "../protocol/task.js";
import { formatDuration } from "../support/duration.js";
import { CaesarError } from "../support/errors.js";

/** The axes on which a bounded child may never exceed its parent. */
export interface Envelope {
  mode: Mode;
  /** true when the network is available to the agent. */
  network: boolean;
  isolation: "inplace" | "worktree";
  /** Time allowed, in ms (for the parent: what is left of it). */
  timeMs: number;
  maxTasksPerHour: number | null;
  maxCostPerDay: number | null;
  tools: ToolLists;
}

export interface Violation {
  field: string;
  child: string;
  parent: string;
}

/** Compare axis by axis; every violation names the field and both values. */
export function escalations(child: Envelope, parent: Envelope): Violation[] {
  const out: Violation[] = [];
  if (parent.mode === "read-only" && child.mode === "write")
    out.push({ field: "mode", child: "write", parent: "read-only" });
  if (!parent.network && child.network) out.push({ field: "network", child: "on", parent: "off" });
  if (parent.isolation === "worktree" && child.isolation === "inplace") {
    out.push({ field: "isolation", child: "inplace", parent: "worktree" });
  }
  if (child.timeMs > parent.timeMs) {
    out.push({
      field: "deadline",
      child: formatDuration(child.timeMs),
      parent: `${formatDuration(parent.timeMs)} left`,
    });
  }
  const parentAllowed = parent.tools.allowed;
  if (parentAllowed !== null) {
    const extra =
      child.tools.allowed === null
        ? null
        : child.tools.allowed.filter((tool) => !parentAllowed.includes(tool));
    if (extra === null || extra.length > 0) {
      out.push({
        field: "allowed_tools",
        child: listText(child.tools.allowed),
        parent: listText(parentAllowed),
      });
    }
  }
  const dropped = parent.tools.excluded.filter((tool) => !child.tools.excluded.includes(tool));
  if (dropped.length > 0) {
    out.push({
      field: "excluded_tools",
      child: listText(child.tools.excluded),
      parent: listText(parent.tools.excluded),
    });
  }
  for (const [field, c, p] of [
    ["max_tasks_per_hour", child.maxTasksPerHour, parent.maxTasksPerHour],
    ["max_cost_per_day", child.maxCostPerDay, parent.maxCostPerDay],
  ] as const) {
    if (p !== null && (c === null || c > p))
      out.push({ field, child: c === null ? "unlimited" : String(c), parent: String(p) });
  }
  return out;
}

function listText(tools: string[] | null): string {
  return tools === null ? "(every tool)" : `[${tools.join(", ")}]`;
}

export function assertNoEscalation(parentId: string, child: Envelope, parent: Envelope): void {
  const violations = escalations(child, parent);
  if (violations.length === 0) return;
  const lines = violations.map((v) => `child ${v.field}=${v.child} exceeds parent's ${v.parent}`);
  throw new CaesarError(
    "delegation_escalation",
    `delegation escalates beyond the parent ${parentId}: ${lines[0]}`,
    {
      detail: `${lines.join("\n")}\nA bounded child may not exceed its parent on any axis. Ask for less (e.g. --mode read-only, --network off, a shorter --timeout), or list the target as { agent = "…", mode = "independent" } in the caller's [agents.<id>].delegates.`,
      data: { violations },
    },
  );
}
