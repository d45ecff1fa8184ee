import type { TaskState } from "../engine/store/state.js";
import type { ReportSource } from "../protocol/report.js";
import { paintChecks } from "./checks-line.js";
import { formatElapsed } from "./elapsed.js";
import { fitParts, LABEL_WIDTH, type Part } from "./event-line.js";
import { oneLine, sanitize, wrap } from "./text.js";
import {
  changeMark,
  paintStatus,
  type Role,
  roleOfSeverity,
  roleOfStatus,
  SEVERITY_ORDER,
  type Theme,
} from "./theme.js";

/** Where a report came from, in words (the recovery tiers, best first). */
export const REPORT_SOURCE_WORDS: Record<ReportSource, string> = {
  channel: "submitted through the return channel",
  native: "the agent's structured output",
  file: "report.json, written by the agent",
  fenced: "a caesar:report block in the agent's output",
  "self-declared": "a report object in the agent's output",
  synthesized: "synthesized by caesar (the agent wrote none)",
};

const MAX_LISTED = 12;

export interface RunSummaryOptions {
  theme: Theme;
  width?: number | undefined;
}

/**
 * The end of `caesar run`: the report's status and where it came from, the summary, the files changed
 * according to git, the findings by severity, and the command to run next.
 */
export function renderRunSummary(state: TaskState, options: RunSummaryOptions): string[] {
  const { theme } = options;
  const width = options.width ?? Number.POSITIVE_INFINITY;
  const bodyWidth = Math.max(20, width - LABEL_WIDTH);
  const m = theme.marks;
  const lines: string[] = [""];
  const label = (text: string, role: Role = "muted") =>
    theme.paint(role, text) + " ".repeat(LABEL_WIDTH - text.length);
  const indent = " ".repeat(LABEL_WIDTH);
  const add = (name: string, parts: Part[]) => lines.push(label(name) + fitParts(parts, bodyWidth, theme));
  const addText = (name: string, text: string) => {
    wrap(text, bodyWidth).forEach((line, index) => {
      lines.push((index === 0 ? label(name) : indent) + line);
    });
  };
  const addItem = (parts: Part[]) => lines.push(indent + fitParts(parts, bodyWidth, theme));

  const report = state.report;
  const took =
    state.started_at && state.finished_at
      ? formatElapsed(Date.parse(state.finished_at) - Date.parse(state.started_at))
      : "";
  const process = state.outcome
    ? `process ${state.outcome.replace(/_/g, " ")}${took ? ` ${state.outcome === "succeeded" ? "in" : "after"} ${took}` : ""}`
    : "";

  if (!report) {
    const status = state.outcome && state.outcome !== "succeeded" ? state.outcome : "failed";
    const words = `${status === "failed" ? "process failed" : `process ${status.replace(/_/g, " ")}`}${took ? ` after ${took}` : ""}`;
    add("status", [
      { text: paintStatus(theme, status, words) },
      { text: ` ${m.sep} no report`, role: "muted" },
    ]);
    if (state.error) addText("error", `${sanitize(state.error.message)} (${state.error.code})`);
    add("next", [{ text: `caesar logs ${state.id}`, role: "strong" }]);
    return lines;
  }

  add("status", [
    { text: paintStatus(theme, report.status) },
    { text: ` ${m.sep} report: ${REPORT_SOURCE_WORDS[report.report_source]}`, role: "muted", flex: true },
  ]);
  if (process) {
    const role = state.outcome === "succeeded" ? "muted" : roleOfStatus(state.outcome);
    add("", [{ text: process, role }]);
  }
  addText("summary", sanitize(report.summary).trim());

  const changes = report.changes;
  const verified = report.changes_verified_by === "git";
  const count = `${changes.length} file${changes.length === 1 ? "" : "s"}`;
  add("changes", [
    {
      text:
        changes.length === 0
          ? state.started_at === null
            ? "none: the agent did not run"
            : verified
              ? "none, according to git"
              : "none declared (not verified: no git repository)"
          : verified
            ? `${count} changed, according to git`
            : `${count} declared by the agent (not verified: no git repository)`,
    },
  ]);
  for (const change of changes.slice(0, MAX_LISTED)) {
    const [mark, role] = changeMark(theme, change.action);
    addItem([
      { text: `${mark} `, role },
      { text: sanitize(change.path), flex: true },
    ]);
  }
  if (changes.length > MAX_LISTED)
    addItem([{ text: `${theme.ellipsis} ${changes.length - MAX_LISTED} more`, role: "muted" }]);

  if (report.checks.length > 0) {
    lines.push(label("checks") + paintChecks(theme, report));
    for (const check of report.checks.slice(0, MAX_LISTED)) {
      const how = check.passed
        ? formatElapsed(check.duration_ms)
        : (check.error ?? `exit code ${check.exit_code}`);
      addItem([
        { text: `${check.passed ? m.ok : m.fail} `, role: check.passed ? "ok" : "fail" },
        { text: oneLine(check.command), flex: true },
        { text: `  ${how}`, role: "muted" },
      ]);
    }
  }
  if (report.attempts.length > 1) {
    const parts = report.attempts.map((attempt) =>
      theme.paint(
        attempt.checks_passed ? "ok" : "fail",
        `${attempt.attempt} ${attempt.checks_passed ? m.ok : m.fail} ${attempt.how}`,
      ),
    );
    lines.push(label("attempts") + parts.join(theme.paint("muted", ` ${m.sep} `)));
  }

  const findings = [...report.findings].sort(
    (a, b) => SEVERITY_ORDER.indexOf(a.severity) - SEVERITY_ORDER.indexOf(b.severity),
  );
  if (findings.length > 0) {
    const counts = SEVERITY_ORDER.map(
      (severity) => [severity, findings.filter((f) => f.severity === severity).length] as const,
    )
      .filter(([, n]) => n > 0)
      .map(([severity, n]) => theme.paint(roleOfSeverity(severity), `${n} ${severity}`));
    lines.push(label("findings") + counts.join(theme.paint("muted", ` ${m.sep} `)));
    for (const finding of findings.slice(0, MAX_LISTED)) {
      const where = finding.file
        ? `  ${finding.file}${finding.line === undefined ? "" : `:${finding.line}`}`
        : "";
      addItem([
        { text: finding.severity.padEnd(9), role: roleOfSeverity(finding.severity) },
        { text: oneLine(finding.title), flex: true },
        { text: sanitize(where), role: "muted" },
      ]);
    }
    if (findings.length > MAX_LISTED)
      addItem([{ text: `${theme.ellipsis} ${findings.length - MAX_LISTED} more`, role: "muted" }]);
  }

  for (const question of report.questions) {
    add("question", [
      { text: `${m.question} `, role: "attention" },
      { text: oneLine(question.question), flex: true },
    ]);
  }
  report.next_steps.slice(0, MAX_LISTED).forEach((step, index) => {
    lines.push(
      (index === 0 ? label("todo") : indent) +
        fitParts([{ text: oneLine(step), flex: true }], bodyWidth, theme),
    );
  });

  const next: string[] = [];
  if (changes.length > 0) {
    next.push(`caesar diff ${state.id}`);
    if (state.isolation === "worktree" && !state.applied) next.push(`caesar apply ${state.id}`);
  } else if (report.status === "failed" || report.report_source === "synthesized") {
    next.push(`caesar logs ${state.id}`);
  }
  if (next.length > 0) lines.push(label("next") + theme.paint("strong", next.join("   ")));
  return lines;
}
