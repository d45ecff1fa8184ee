import { checksVerdict } from "../../protocol/checks.js";
import { isSuccessfulFinish, type TaskView, wroteDuringReadOnly } from "./task-view.js";

/**
 * A finished task as the delegation reference's `delegate` tool returns it to the agent that delegated
 * (the OACP specification's delegation semantics, docs/mcp.md): on success the output starts with
 * `[Agent '<target>' (<provider>/<model>)]` and then the agent's answer; on failure the error is
 * `Agent '<target>' failed: <why>`, or `Agent '<target>' timed out after <N>s`. Several tasks waited on
 * together are one block each, under `[Parallel delegation: <N> agents]`.
 *
 * In caesar, `<target>` is what the caller named (the role, else the agent), `<provider>` the agent that
 * ran it, and `<model>` the model asked of it, else `default` (the agent's own choice).
 */
export interface DelegationOutcome {
  task_id: string;
  target: string;
  success: boolean;
  /** The agent's answer under its header (success only). */
  output: string | null;
  /** Why it did not succeed (failure only). */
  error: string | null;
}

export interface DelegationTarget {
  /** The model the plan asked for (null: the agent's default). */
  model: string | null;
  /** The task's deadline, for the timeout's message. */
  timeout_ms: number;
}

/** One finished task as its delegate's result. */
export function describeOutcome(view: TaskView, plan: DelegationTarget | undefined): DelegationOutcome {
  const target = view.role ?? view.agent;
  const base = { task_id: view.task_id, target };
  if (isSuccessfulFinish(view)) {
    const header = `[Agent '${target}' (${view.agent}/${plan?.model ?? "default"})]`;
    return { ...base, success: true, output: `${header}\n${answerOf(view)}`, error: null };
  }
  if (view.outcome === "timed_out") {
    const seconds = Math.round((plan?.timeout_ms ?? view.duration_ms ?? 0) / 1000);
    return { ...base, success: false, output: null, error: `Agent '${target}' timed out after ${seconds}s` };
  }
  return { ...base, success: false, output: null, error: `Agent '${target}' failed: ${whyFailed(view)}` };
}

/** Several outcomes as the reference's parallel fan-out renders them, in request order. */
export function renderParallel(outcomes: readonly DelegationOutcome[]): string {
  const blocks = outcomes.map((outcome) =>
    outcome.success
      ? `--- ${outcome.target} (success=true) ---\n${outcome.output}`
      : `--- ${outcome.target} (success=false) ---\nError: ${outcome.error}`,
  );
  return [`[Parallel delegation: ${outcomes.length} agents]`, ...blocks].join("\n\n");
}

/** The agent's answer, then where its work is: the caller needs the id to review or take it. */
function answerOf(view: TaskView): string {
  const report = view.report;
  const answer = [report?.summary ?? "", report?.details ?? ""]
    .filter((part) => part.trim() !== "")
    .join("\n\n");
  const changes = report?.changes.length ?? 0;
  const verified = report?.changes_verified_by === "git" ? "verified by git" : "as the agent declared them";
  const work =
    changes === 0
      ? `Task ${view.task_id}: report ${report?.status ?? "none"}, no file changed.`
      : `Task ${view.task_id}: report ${report?.status}, ${changes} file(s) changed (${verified}): review with caesar_diff, take with caesar_apply.`;
  return `${answer || "(the agent gave no summary)"}\n\n${work}`;
}

function whyFailed(view: TaskView): string {
  if (view.phase !== "finished") return `still ${view.phase} (task ${view.task_id})`;
  if (view.outcome === "cancelled") return `cancelled (task ${view.task_id})`;
  if (view.error) return `${view.error.message} (task ${view.task_id}, ${view.error.code})`;
  if (view.outcome === "succeeded" && wroteDuringReadOnly(view))
    return `it changed ${view.report!.changes.length} file(s) during a read-only task (task ${view.task_id})`;
  const checks = checksVerdict(view.report?.checks);
  if (view.outcome === "succeeded" && view.report?.status !== "failed" && checks.state === "failed")
    return `its checks failed (${checks.passed} of ${checks.total} passed; task ${view.task_id})`;
  const summary = view.report?.summary ?? "no report";
  return view.report?.status === "failed"
    ? `${summary} (task ${view.task_id}, report failed)`
    : `${summary} (task ${view.task_id}, the agent's process ${view.outcome ?? "ended"})`;
}
