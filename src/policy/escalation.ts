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
  maxActionsPerHour: number | null;
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
    ["max_actions_per_hour", child.maxActionsPerHour, parent.maxActionsPerHour],
  ] as const) {
    if (p !== null && (c === null || c > p))
      out.push({ field, child: c === null ? "unlimited" : String(c), parent: String(p) });
  }
  return out;
}

function listText(tools: string[] | null): string {
  return tools === null ? "(every tool)" : `[${tools.join(", ")}]`;
}

/** What to ask instead, per axis (a caller can give a better one, e.g. for a network it cannot cut). */
const REMEDIES: Record<string, string> = {
  mode: "ask for --mode read-only",
  network: "ask for --network off, with an agent caesar can confine",
  isolation: "ask for --isolation worktree",
  deadline: "ask for a shorter --timeout (or none: a default is clamped to the parent's time left)",
  allowed_tools: "the target's [agents.<id>] allowed_tools must stay within the parent's",
  excluded_tools: "the target's [agents.<id>] excluded_tools must keep every one of the parent's",
  max_tasks_per_hour: "the target's risk profile may not allow more tasks per hour than the parent's",
  max_cost_per_day: "the target's risk profile may not allow more cost per day than the parent's",
  max_actions_per_hour: "the target's risk profile may not allow more tool calls per hour than the parent's",
};

/**
 * Refuse a bounded child that exceeds its parent: the first violation in the summary, the others (each
 * once) and what to do about each in the detail.
 */
export function assertNoEscalation(
  parentId: string,
  child: Envelope,
  parent: Envelope,
  remedies: Partial<Record<string, string>> = {},
): void {
  const violations = escalations(child, parent);
  if (violations.length === 0) return;
  const line = (v: Violation) => `child ${v.field}=${v.child} exceeds parent's ${v.parent}`;
  const others = violations.slice(1).map((v) => `also: ${line(v)}`);
  const todo = violations.map(
    (v) => `- ${v.field}: ${remedies[v.field] ?? REMEDIES[v.field] ?? "ask for less"}`,
  );
  throw new CaesarError(
    "delegation_escalation",
    `delegation escalates beyond the parent ${parentId}: ${line(violations[0]!)}`,
    {
      detail: [
        ...others,
        "A bounded child may not exceed its parent on any axis. What would work:",
        ...todo,
        '- or list the target as { agent = "…", mode = "independent" } in the caller\'s [agents.<id>].delegates (its own policy and budget).',
      ].join("\n"),
      data: { violations },
    },
  );
}
