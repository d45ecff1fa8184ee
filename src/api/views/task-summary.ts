import { hasSeparateResult, type TaskState } from "../../engine/store/state.js";
import { checksVerdict } from "../../protocol/checks.js";
import type { IndexedTask } from "../index/indexed-task.js";
import type { ChangeStatus, TaskDescription, TaskSummary } from "../response-schema.js";

/** Where a change stands (response-schema.ts's ChangeStatusSchema says what each status means). */
export function changeStatusOf(state: TaskState): ChangeStatus {
  if (state.phase !== "finished") return "running";
  if (state.applied) return "applied";
  const changes = state.report?.changes.length ?? 0;
  if (!hasSeparateResult(state)) return changes > 0 ? "in_place" : "empty";
  return changes > 0 ? "ready" : "empty";
}

/** One task as lists show it (the dashboard's task list, the task page's header). */
export function summarizeTask(task: IndexedTask): TaskSummary {
  const s = task.state;
  return {
    id: s.id,
    changeNumber: s.change_number,
    objective: s.objective,
    agent: s.agent,
    role: s.role,
    mode: s.mode,
    isolation: s.isolation,
    phase: s.phase,
    outcome: s.outcome,
    reportStatus: s.report_status,
    changeStatus: changeStatusOf(s),
    summary: s.report?.summary ?? null,
    checks: checksVerdict(s.report?.checks),
    attempts: s.report?.attempts.length ?? 0,
    error: s.error,
    createdAt: s.created_at,
    startedAt: s.started_at,
    finishedAt: s.finished_at,
    updatedAt: s.updated_at,
    branch: s.branch,
    worktree: s.worktree,
    baseRef: s.base_ref,
    parentId: s.parent_id,
    depth: s.depth,
    costUsd: s.report?.usage.cost_usd ?? null,
    inputTokens: s.report?.usage.input_tokens ?? null,
    outputTokens: s.report?.usage.output_tokens ?? null,
    applied: s.applied,
    cancelRequested: s.cancel_requested,
    waitingForSlot: s.waiting_for_slot?.map((holder) => holder.task_id) ?? null,
    worker: s.remote?.worker?.id ?? null,
    events: task.spans.length,
    pendingQuestions: task.questions.filter((q) => q.answer === null).length,
    revision: task.revision,
  };
}

/** The task page: the summary, the normalized report (with its findings) and every question with its answer. */
export function describeTask(task: IndexedTask): TaskDescription {
  return {
    task: summarizeTask(task),
    report: task.state.report,
    questions: task.questions.map(({ question, answer }) => ({
      id: question.id,
      question: question.question,
      options: question.options ?? null,
      askedAt: question.asked_at,
      answer: answer
        ? { answer: answer.answer, answeredAt: answer.answered_at, answeredBy: answer.answered_by ?? null }
        : null,
    })),
  };
}
