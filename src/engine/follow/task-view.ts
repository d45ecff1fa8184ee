import { type ChecksVerdict, checksVerdict } from "../../protocol/checks.js";
import type { Question } from "../../protocol/questions.js";
import type { NormalizedReport } from "../../protocol/report.js";
import { pendingQuestions } from "../questions/questions.js";
import type { Outcome, Phase } from "../store/state.js";
import type { TaskRecord } from "../store/task-store.js";

/**
 * One task as a front end shows it to a program or a model: where it is, how it ended, its normalized
 * report, and the questions it is waiting on. Read from the task directory only.
 */
export interface TaskView {
  task_id: string;
  agent: string;
  role: string | null;
  objective: string;
  mode: string;
  isolation: string;
  phase: Phase;
  /** How the agent's process ended (null while it runs). */
  outcome: Outcome | null;
  parent_id: string | null;
  depth: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  deadline_at: string | null;
  /** From start to finish (or to now, while running); null before the agent started. */
  duration_ms: number | null;
  branch: string | null;
  worktree: string | null;
  change_number: number | null;
  applied: boolean;
  /** Tasks holding the slots this one waits for (`[policy] max_parallel`). */
  waiting_for_slot: string[] | null;
  /** The worker a remote task runs on (null for a task of this machine, or one still in the queue). */
  worker: string | null;
  error: { code: string; message: string } | null;
  /** The normalized report (changes verified by git), once the task has finished. */
  report: NormalizedReport | null;
  /** caesar's checks after the last attempt: how many passed (state `none` when the task has none). */
  checks: ChecksVerdict;
  /** How many times the agent ran (more than 1 when checks failed and attempts were left). */
  attempts: number;
  /** Questions asked through the return channel that nobody has answered yet. */
  open_questions: Question[];
}

export async function viewTask(record: TaskRecord, now = Date.now()): Promise<TaskView> {
  const { state } = record;
  const open = state.phase === "finished" ? [] : await pendingQuestions(record.dir).catch(() => []);
  const started = state.started_at ? Date.parse(state.started_at) : undefined;
  const ended = state.finished_at ? Date.parse(state.finished_at) : now;
  return {
    task_id: record.id,
    agent: state.agent,
    role: state.role,
    objective: state.objective,
    mode: state.mode,
    isolation: state.isolation,
    phase: state.phase,
    outcome: state.outcome,
    parent_id: state.parent_id,
    depth: state.depth,
    created_at: state.created_at,
    started_at: state.started_at,
    finished_at: state.finished_at,
    deadline_at: state.deadline_at,
    duration_ms: started === undefined ? null : Math.max(0, ended - started),
    branch: state.branch,
    worktree: state.worktree,
    change_number: state.change_number,
    applied: state.applied !== null,
    waiting_for_slot: state.waiting_for_slot?.map((holder) => holder.task_id) ?? null,
    worker: state.remote?.worker?.id ?? null,
    error: state.error,
    report: state.report,
    checks: checksVerdict(state.report?.checks),
    attempts: state.report?.attempts.length ?? 0,
    open_questions: open,
  };
}

/**
 * Did a finished task do its job? Its process succeeded, its report does not say it failed, none of
 * caesar's checks failed, and — read-only — git saw no file changed (as `caesar run`'s exit code says).
 */
export function isSuccessfulFinish(view: Pick<TaskView, "phase" | "outcome" | "report" | "mode">): boolean {
  return (
    view.phase === "finished" &&
    view.outcome === "succeeded" &&
    view.report?.status !== "failed" &&
    checksVerdict(view.report?.checks).state !== "failed" &&
    !wroteDuringReadOnly(view)
  );
}

/** A read-only task in which git saw a file changed. */
export function wroteDuringReadOnly(view: Pick<TaskView, "mode" | "report">): boolean {
  return view.mode === "read-only" && (view.report?.changes.length ?? 0) > 0;
}
