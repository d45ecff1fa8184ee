import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { StreamOutcome } from "../../agents/adapter.js";
import { formatProblem, safeParseDocument } from "../../protocol/documents.js";
import type { Finding, Report, ReportSource } from "../../protocol/report.js";
import { PROTOCOLS } from "../../protocol/versions.js";
import { formatDuration } from "../../support/duration.js";
import { errnoOf } from "../../support/errors.js";
import type { Outcome } from "../store/state.js";
import { findFencedReport, findSelfDeclaredReport } from "./report-scan.js";

/** Where the return channel's `submit_report` leaves a validated report (tier 1). */
export const CHANNEL_REPORT_FILE = "channel-report.json";

export interface RecoveryInput {
  taskDir: string;
  reportPath: string;
  stream: StreamOutcome;
  /** The agent's output to search in the degraded tier (its last message, the end of raw.log). */
  outputText: string;
  outcome: Outcome;
  exit: { code: number | null; signal: string | null };
  timeoutMs: number;
  /** Why the process could not run, when it could not (missing binary, setup failure…). */
  launchError?: string;
  changedFiles: number | undefined;
}

export interface Recovered {
  report: Report;
  source: ReportSource;
  /** Findings about the recovery itself (an invalid report file, a report that contradicts the process…). */
  findings: Finding[];
}

/**
 * Recover the agent's report through the four tiers, best first, and keep the first one that holds:
 * the return channel, the CLI's native structured output, the report file, then the degraded tier
 * (a fenced `caesar:report` block, any self-declared report JSON, or a report synthesised from the
 * process outcome). An invalid report is never dropped silently: it becomes a finding.
 */
export async function recoverReport(input: RecoveryInput): Promise<Recovered> {
  const findings: Finding[] = [];
  const found = await firstTier(input, findings);
  if (found) {
    findings.push(...processFindings(input, found.report));
    return { ...found, findings };
  }
  return {
    report: synthesize(input),
    source: "synthesized",
    findings: [...findings, noReportFinding(input)],
  };
}

async function firstTier(
  input: RecoveryInput,
  findings: Finding[],
): Promise<{ report: Report; source: ReportSource } | undefined> {
  const channel = await readReportFile(
    join(input.taskDir, CHANNEL_REPORT_FILE),
    "the return channel's report",
    findings,
  );
  if (channel) return { report: channel, source: "channel" };

  if (input.stream.nativeReport !== undefined) {
    const result = safeParseDocument("report", input.stream.nativeReport);
    if (result.ok) return { report: result.value, source: "native" };
    findings.push({
      severity: "medium",
      title: "The agent's structured output is not a valid report",
      detail: result.problems.map(formatProblem).join("\n"),
    });
  }

  const file = await readReportFile(input.reportPath, "report.json", findings);
  if (file) return { report: file, source: "file" };

  const fenced = findFencedReport(input.outputText);
  if (fenced) return { report: fenced, source: "fenced" };
  const declared = findSelfDeclaredReport(input.outputText);
  if (declared) return { report: declared, source: "self-declared" };
  return undefined;
}

async function readReportFile(path: string, name: string, findings: Finding[]): Promise<Report | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return undefined;
    findings.push({ severity: "medium", title: `Could not read ${name}`, detail: (error as Error).message });
    return undefined;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    findings.push({
      severity: "medium",
      title: `${name} is not valid JSON; it was ignored`,
      detail: `${(error as Error).message}. First bytes: ${JSON.stringify(text.slice(0, 120))}`,
    });
    return undefined;
  }
  const result = safeParseDocument("report", raw);
  if (result.ok) return result.value;
  findings.push({
    severity: "medium",
    title: `${name} is not a valid ${PROTOCOLS.report} report; it was ignored`,
    detail: result.problems.map(formatProblem).join("\n"),
  });
  return undefined;
}

/** What the process outcome says that the report does not. */
function processFindings(input: RecoveryInput, report: Report): Finding[] {
  const findings: Finding[] = [];
  if (input.stream.failure) {
    findings.push({
      severity: "high",
      title: "The agent's CLI reported a failure",
      detail: input.stream.failure.message,
    });
  }
  if (input.outcome === "timed_out") {
    findings.push({
      severity: "high",
      title: `Timed out after ${formatDuration(input.timeoutMs)}; the agent was stopped`,
    });
  } else if (input.outcome === "cancelled") {
    findings.push({ severity: "medium", title: "Cancelled; the agent was stopped" });
  } else if (input.outcome === "failed" && report.status === "success") {
    findings.push({
      severity: "medium",
      title: `The report says success but the process failed (${describeExit(input.exit)})`,
    });
  }
  return findings;
}

function describeExit(exit: { code: number | null; signal: string | null }): string {
  if (exit.signal) return `killed by ${exit.signal}`;
  return `exit code ${exit.code ?? "?"}`;
}

function synthesize(input: RecoveryInput): Report {
  const files =
    input.changedFiles === undefined ? "" : ` ${input.changedFiles} file(s) changed according to git.`;
  let status: Report["status"] = "failed";
  let summary: string;
  if (input.launchError) summary = input.launchError;
  else if (input.stream.failure) summary = `The agent failed: ${input.stream.failure.message}`;
  else if (input.outcome === "timed_out")
    summary = `Timed out after ${formatDuration(input.timeoutMs)} without a report.${files}`;
  else if (input.outcome === "cancelled") summary = `Cancelled before the agent wrote a report.${files}`;
  else if (input.outcome === "succeeded") {
    status = "partial";
    summary = `The agent exited 0 without a report.${files}`;
  } else summary = `The agent failed (${describeExit(input.exit)}) without a report.${files}`;
  return {
    protocol: PROTOCOLS.report,
    status,
    summary,
    details: "",
    changes: [],
    commands_run: [],
    findings: [],
    questions: [],
    next_steps: [],
    artifacts: [],
    usage: {},
  };
}

function noReportFinding(input: RecoveryInput): Finding {
  return {
    severity: input.launchError ? "high" : "medium",
    title: "No report from the agent: this one is synthesised from the process outcome and the diff",
    detail: `No submit_report, no structured output, no ${input.reportPath}, no fenced caesar:report block, no self-declared report in the output.`,
  };
}
