import { join } from "node:path";
import type { StreamOutcome } from "../../agents/adapter.js";
import { formatProblem, safeParseDocument } from "../../protocol/documents.js";
import type { Finding, Report, ReportSource } from "../../protocol/report.js";
import { PROTOCOLS } from "../../protocol/versions.js";
import { readTaskText, UnsafeTaskFileError } from "../store/task-files.js";
import { type Ending, endingFindings, synthesizeReport } from "./ending.js";
import { findFencedReport, findSelfDeclaredReport, type RejectedCandidate } from "./report-scan.js";

/** Where the return channel's `submit_report` leaves a validated report (tier 1). */
export const CHANNEL_REPORT_FILE = "channel-report.json";

export interface RecoveryInput {
  taskDir: string;
  reportPath: string;
  stream: StreamOutcome;
  /** The agent's output to search in the degraded tier (its last message, the end of raw.log). */
  outputText: string;
  /** How the task ended, in words (ending.ts). */
  ending: Ending;
  changedFiles: number | undefined;
}

export interface Recovered {
  report: Report;
  source: ReportSource;
  /** Findings about the recovery itself (an invalid report file, a report that contradicts the process…). */
  findings: Finding[];
}

/** What each tier found, for the finding that explains a synthesised report. */
type TierNote = string;

const MAX_LISTED_CANDIDATES = 3;

/**
 * Recover the agent's report through the four tiers, best first, and keep the first one that holds:
 * the return channel, the CLI's native structured output, the report file, then the degraded tier
 * (a fenced `caesar:report` block, any self-declared report JSON, or a report synthesised from raw.log
 * and the diff). Whatever a tier finds invalid becomes a finding saying what was wrong and where recovery
 * went next — never a silent skip.
 */
export async function recoverReport(input: RecoveryInput): Promise<Recovered> {
  const findings: Finding[] = [];
  const notes: TierNote[] = [];
  const found = await firstTier(input, findings, notes);
  if (found) {
    findings.push(...endingFindings(input.ending, found.report));
    return { ...found, findings };
  }
  return {
    report: synthesizeReport(input.ending, input.changedFiles),
    source: "synthesized",
    findings: [...findings, noReportFinding(input, notes)],
  };
}

async function firstTier(
  input: RecoveryInput,
  findings: Finding[],
  notes: TierNote[],
): Promise<{ report: Report; source: ReportSource } | undefined> {
  const channel = await readReportFile(
    join(input.taskDir, CHANNEL_REPORT_FILE),
    "The return channel's report",
    "structured output",
    findings,
  );
  notes.push(`return channel: ${channel.note ?? "no report submitted"}`);
  if (channel.report) return { report: channel.report, source: "channel" };

  if (input.stream.nativeReport !== undefined) {
    const result = safeParseDocument("report", input.stream.nativeReport);
    if (result.ok) return { report: result.value, source: "native" };
    findings.push({
      severity: "medium",
      title: "The agent's structured output is not a valid report; recovery moved on to report.json",
      detail: result.problems.map(formatProblem).join("\n"),
    });
    notes.push("structured output: invalid (see the finding above)");
  } else notes.push("structured output: none");

  const file = await readReportFile(input.reportPath, "report.json", "fenced blocks in the output", findings);
  notes.push(`report.json: ${file.note ?? "absent"}`);
  if (file.report) return { report: file.report, source: "file" };

  const fenced = findFencedReport(input.outputText);
  const fencedRejected = distinct(fenced.rejected);
  if (fencedRejected.length > 0)
    findings.push(
      rejectedFinding(
        fencedRejected,
        "fenced ```json caesar:report block",
        fenced.report ? "an earlier valid block was used" : "recovery moved on to self-declared reports",
      ),
    );
  if (fenced.report) return { report: fenced.report, source: "fenced" };
  notes.push(
    `fenced caesar:report block: ${fencedRejected.length === 0 ? "none" : `${fencedRejected.length} found, none valid`}`,
  );

  const declared = findSelfDeclaredReport(input.outputText);
  const seen = new Set(fencedRejected.map((candidate) => candidate.text));
  const declaredRejected = distinct(declared.rejected).filter((candidate) => !seen.has(candidate.text));
  if (declaredRejected.length > 0)
    findings.push(
      rejectedFinding(
        declaredRejected,
        `JSON object declaring "${PROTOCOLS.report}"`,
        declared.report
          ? "an earlier valid one was used"
          : "the report was synthesised from raw.log and the diff",
      ),
    );
  if (declared.report) return { report: declared.report, source: "self-declared" };
  notes.push(
    `self-declared report: ${declaredRejected.length === 0 ? "none" : `${declaredRejected.length} found, none valid`}`,
  );
  return undefined;
}

/**
 * Read a report file of one tier. `note` says what was there when it is not a valid report (undefined:
 * nothing was there); invalid content also becomes a finding naming the next tier.
 */
async function readReportFile(
  path: string,
  name: string,
  next: string,
  findings: Finding[],
): Promise<{ report?: Report; note?: string }> {
  let text: string;
  try {
    const read = await readTaskText(path);
    if (read === undefined) return {};
    text = read;
  } catch (error) {
    // Not a regular file (a FIFO, a link): moved aside unopened, and a finding of its own (unsafe_task_file).
    if (error instanceof UnsafeTaskFileError) return { note: "not a regular file; moved aside unread" };
    findings.push({ severity: "medium", title: `Could not read ${name}`, detail: (error as Error).message });
    return { note: "unreadable (see the finding above)" };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    findings.push({
      severity: "medium",
      title: `${name} is not valid JSON; it was ignored and recovery moved on to ${next}`,
      detail: `${(error as Error).message}. First bytes: ${JSON.stringify(text.slice(0, 120))}`,
    });
    return { note: "invalid JSON (see the finding above)" };
  }
  const result = safeParseDocument("report", raw);
  if (result.ok) return { report: result.value };
  findings.push({
    severity: "medium",
    title: `${name} is not a valid ${PROTOCOLS.report} report; it was ignored and recovery moved on to ${next}`,
    detail: result.problems.map(formatProblem).join("\n"),
  });
  return { note: "invalid (see the finding above)" };
}

function rejectedFinding(rejected: RejectedCandidate[], what: string, then: string): Finding {
  const n = rejected.length;
  const shown = rejected.slice(0, MAX_LISTED_CANDIDATES).map((candidate, index) => {
    const excerpt = candidate.text.replace(/\s+/g, " ").slice(0, 160);
    return `${index === 0 ? "The last one" : `Number ${index + 1} from the end`}: ${excerpt}\n  ${candidate.problems.join("\n  ")}`;
  });
  return {
    severity: "medium",
    title: `${n === 1 ? `A ${what} in the output is` : `${n} ${what}s in the output are`} not a valid report; ${then}`,
    detail: [
      ...shown,
      ...(n > MAX_LISTED_CANDIDATES ? [`… and ${n - MAX_LISTED_CANDIDATES} more`] : []),
    ].join("\n"),
  };
}

function distinct(candidates: RejectedCandidate[]): RejectedCandidate[] {
  const seen = new Set<string>();
  return candidates.filter((candidate) => !seen.has(candidate.text) && seen.add(candidate.text));
}

function noReportFinding(input: RecoveryInput, notes: TierNote[]): Finding {
  return {
    severity: input.ending.agentRan ? "medium" : "high",
    title: "No valid report from the agent: this one is synthesised from raw.log and the diff",
    detail: `What each tier found — ${notes.join("; ")}.`,
  };
}
