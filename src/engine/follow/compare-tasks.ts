import type { ChecksVerdict } from "../../protocol/checks.js";
import type { ReportStatus, Usage } from "../../protocol/report.js";
import { type DiffSize, diffSize } from "../../workspace/diff-size.js";
import { readPlan } from "../lifecycle/live-task.js";
import { taskResult } from "../lifecycle/result.js";
import type { Outcome, Phase } from "../store/state.js";
import type { TaskRecord } from "../store/task-store.js";
import { viewTask } from "./task-view.js";

/** One contender of a race, as the comparison shows it. */
export interface ContenderRow {
  task_id: string;
  agent: string;
  phase: Phase;
  outcome: Outcome | null;
  /** The report's status (null until the task finished). */
  status: ReportStatus | null;
  summary: string | null;
  /**
   * The acceptance criteria and whether they are met — by the agent's own word (a `success` report means
   * they are), beside the commands it ran that failed, which may say otherwise.
   */
  criteria: { listed: string[]; met: boolean | null; failed_commands: string[] };
  /** caesar's own checks after its last attempt: the evidence a race is won on. */
  checks: ChecksVerdict;
  /** The checks that failed, by command. */
  failed_checks: string[];
  attempts: number;
  /** The verified change against the task's starting point (null when there is none to measure). */
  diff: DiffSize | null;
  duration_ms: number | null;
  finished_at: string | null;
  usage: Usage | null;
  findings: { high: number; medium: number; low: number };
  report_source: string | null;
}

/** Compare tasks that worked on the same objective, side by side, in the order given. */
export async function compareTasks(records: TaskRecord[]): Promise<ContenderRow[]> {
  return Promise.all(records.map(compareOne));
}

async function compareOne(record: TaskRecord): Promise<ContenderRow> {
  const view = await viewTask(record);
  const plan = await readPlan(record.dir);
  const report = view.report;
  let diff: DiffSize | null = null;
  if (record.state.start_tree) {
    try {
      const result = await taskResult(record.state, plan?.repo_top ?? null);
      diff = await diffSize(result.top, result.from, result.to);
    } catch {
      diff = null;
    }
  }
  const count = (severities: string[]) =>
    report?.findings.filter((finding) => severities.includes(finding.severity)).length ?? 0;
  return {
    task_id: view.task_id,
    agent: view.agent,
    phase: view.phase,
    outcome: view.outcome,
    status: report?.status ?? null,
    summary: report?.summary ?? null,
    criteria: {
      listed: plan?.acceptance ?? [],
      met: report ? report.status === "success" : null,
      failed_commands:
        report?.commands_run
          .filter((run) => run.exit_code !== undefined && run.exit_code !== null && run.exit_code !== 0)
          .map((run) => run.command) ?? [],
    },
    checks: view.checks,
    failed_checks: report?.checks.filter((check) => !check.passed).map((check) => check.command) ?? [],
    attempts: view.attempts,
    diff,
    duration_ms: view.duration_ms,
    finished_at: view.finished_at,
    usage: report && Object.keys(report.usage).length > 0 ? report.usage : null,
    findings: { high: count(["high", "critical"]), medium: count(["medium"]), low: count(["low", "info"]) },
    report_source: report?.report_source ?? null,
  };
}
