import type { Attempt, CheckResult } from "../../protocol/checks.js";
import type { Finding, NormalizedReport } from "../../protocol/report.js";

/** How much of a failing check's output its finding quotes. */
const FINDING_TAIL_CHARS = 1500;

/**
 * Put caesar's checks into the normalized report: the results after the last attempt, every attempt, a
 * `high` finding for each check that failed (quoting the end of its output) — and a report that says
 * `success` while a check fails becomes `partial`: the agent's word does not outweigh the evidence.
 */
export function applyChecks(
  report: NormalizedReport,
  checks: CheckResult[],
  attempts: Attempt[],
): NormalizedReport {
  const failed = checks.filter((check) => !check.passed);
  const findings: Finding[] = failed.map((check) => ({
    severity: "high",
    title: `Check failed: \`${check.command}\` (${describeCheck(check)})`,
    detail: quoteTail(check),
  }));
  const downgraded = report.status === "success" && failed.length > 0;
  if (downgraded) {
    findings.unshift({
      severity: "medium",
      title: `The report says success, but ${failed.length} of ${checks.length} check(s) failed: it is partial`,
      detail: `The agent's summary was: ${report.summary}`,
    });
  }
  return {
    ...report,
    status: downgraded ? "partial" : report.status,
    findings: [...report.findings, ...findings],
    checks,
    attempts,
  };
}

/** `exit code 1 after 2.1s`, `killed at its deadline (30s)`, `not run: …`. */
export function describeCheck(check: CheckResult): string {
  if (check.error) return check.error;
  const seconds = (check.duration_ms / 1000).toFixed(1);
  return `exit code ${check.exit_code ?? "?"} after ${seconds}s`;
}

function quoteTail(check: CheckResult): string {
  const tail = check.output_tail.trimEnd();
  if (tail === "") return check.error ? `No output. ${check.error}.` : "No output.";
  const cut = tail.length > FINDING_TAIL_CHARS ? `…${tail.slice(tail.length - FINDING_TAIL_CHARS)}` : tail;
  return `The end of its output${check.log ? ` (all of it: ${check.log} in the task directory)` : ""}:\n${cut}`;
}
