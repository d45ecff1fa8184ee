import { isAbsolute, relative } from "node:path";
import type {
  Change,
  ChangeAction,
  Finding,
  NormalizedReport,
  Report,
  ReportSource,
} from "../../protocol/report.js";
import type { Mode } from "../../protocol/task.js";
import type { ObservedChange } from "../../workspace/changes.js";

export interface ReconcileInput {
  taskId: string;
  report: Report;
  source: ReportSource;
  mode: Mode;
  workspace: string;
  /** What git observed against the starting point; undefined outside git (no reconciliation possible). */
  observed: ObservedChange[] | undefined;
  /** Paths shared with the main tree by symlink ([worktree] link). */
  linked: string[];
  /** Findings gathered on the way (network, recovery, stream), added to the report's own. */
  findings: Finding[];
  usage?: Report["usage"];
}

const LIST_LIMIT = 20;

/**
 * The diff is the truth: in a git workspace the report's `changes` become what git observed, and every
 * disagreement with the agent's declaration becomes a finding. Outside git the declaration stands, and
 * says so.
 */
export function reconcile(input: ReconcileInput): NormalizedReport {
  const { report } = input;
  const findings = [...report.findings, ...input.findings];
  const usage = { ...(input.usage ?? {}), ...report.usage };
  for (const path of input.linked) {
    findings.push({
      severity: "info",
      title: `${path} is shared with the main tree (symlink)`,
      detail: "Writes there are not isolated, and are not part of the diff.",
    });
  }
  if (input.observed === undefined) {
    if (input.mode === "read-only" && report.changes.length > 0) {
      findings.push({
        severity: "high",
        title: "The agent declares changes during a read-only task",
        detail: list(report.changes.map((c) => c.path)),
      });
    }
    return {
      ...report,
      findings,
      usage,
      task_id: input.taskId,
      changes_verified_by: "declaration",
      report_source: input.source,
      checks: [],
      attempts: [],
    };
  }

  const declared = new Map<string, Change>();
  for (const change of report.changes) declared.set(normalizePath(change.path, input.workspace), change);
  const observed = new Map(input.observed.map((change) => [change.path, change]));
  // A rename's old path is part of what git saw: declaring it deleted (or renamed) is right.
  const renamedFrom = new Map(
    input.observed.filter((change) => change.from).map((change) => [change.from!, change]),
  );
  const changes: Change[] = input.observed.map((change) => {
    const summary = (declared.get(change.path) ?? (change.from ? declared.get(change.from) : undefined))
      ?.summary;
    const { path, action, from } = change;
    return { path, action, ...(from ? { from } : {}), ...(summary === undefined ? {} : { summary }) };
  });

  if (input.mode === "read-only" && changes.length > 0) {
    findings.push({
      severity: "high",
      title: `${changes.length} file(s) changed during a read-only task`,
      detail: list(changes.map((c) => `${c.action} ${c.from ? `${c.from} → ` : ""}${c.path}`)),
    });
  }
  if (input.source !== "synthesized") {
    const absent = [...declared.keys()].filter((path) => !observed.has(path) && !renamedFrom.has(path));
    if (absent.length > 0) {
      findings.push({
        severity: "medium",
        title: `${absent.length} declared change(s) not found by git`,
        detail: list(absent),
      });
    }
    const contradicted = [...declared].flatMap(([path, change]) => {
      const seen = observed.get(path);
      const before = renamedFrom.get(path);
      const gitSays = seen?.action ?? (before ? "deleted" : undefined);
      if (gitSays === undefined || agrees(change.action, seen, before)) return [];
      return [`${path}: declared ${change.action}, git saw it ${describeObserved(seen, before)}`];
    });
    if (contradicted.length > 0) {
      findings.push({
        severity: "medium",
        title: `${contradicted.length} declared change(s) contradicted by git`,
        detail: list(contradicted),
      });
    }
    const isDeclared = (change: ObservedChange) =>
      declared.has(change.path) || (change.from !== undefined && declared.has(change.from));
    const undeclared = input.observed.filter((change) => !isDeclared(change)).map((change) => change.path);
    if (undeclared.length > 0 && declared.size > 0) {
      findings.push({
        severity: "low",
        title: `${undeclared.length} change(s) found by git but not declared`,
        detail: list(undeclared),
      });
    } else if (undeclared.length > 0) {
      findings.push({
        severity: "low",
        title: `The report declares no changes; git found ${undeclared.length}`,
        detail: list(undeclared),
      });
    }
  }
  return {
    ...report,
    changes,
    findings,
    usage,
    task_id: input.taskId,
    changes_verified_by: "git",
    report_source: input.source,
    checks: [],
    attempts: [],
  };
}

/**
 * Does the declared action agree with what git saw at that path? A rename may be declared as one, or as
 * its two halves (the old path deleted, the new one added).
 */
function agrees(
  declared: ChangeAction,
  seen: ObservedChange | undefined,
  before: ObservedChange | undefined,
): boolean {
  if (seen) return declared === seen.action || (seen.action === "renamed" && declared === "added");
  return before !== undefined && (declared === "deleted" || declared === "renamed");
}

function describeObserved(seen: ObservedChange | undefined, before: ObservedChange | undefined): string {
  if (seen) return seen.from ? `renamed from ${seen.from}` : seen.action;
  return `renamed to ${before!.path}`;
}

function normalizePath(path: string, workspace: string): string {
  const relativePath = isAbsolute(path) ? relative(workspace, path) : path;
  return relativePath.replace(/^\.\//, "").replace(/\\/g, "/");
}

function list(paths: string[]): string {
  const shown = paths.slice(0, LIST_LIMIT).join("\n");
  return paths.length > LIST_LIMIT ? `${shown}\n… and ${paths.length - LIST_LIMIT} more` : shown;
}
