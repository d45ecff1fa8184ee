import type { ChecksVerdict } from "../protocol/checks.js";
import { type Role, roleOfStatus } from "./theme.js";

/** What a task's state word is made of (a task's state, or a node of its delegation tree). */
export interface TaskStateShape {
  phase: string;
  waiting: boolean;
  outcome: string | null;
  report_status: string | null;
  checks: ChecksVerdict;
}

/** A task's state in one word or two: its phase while it runs, then its report status or outcome. */
export function describeTaskState(state: TaskStateShape): string {
  if (state.phase !== "finished") return state.waiting ? "waiting" : state.phase;
  const verdict = state.checks;
  const checks = verdict.state === "none" ? "" : `, checks ${verdict.passed}/${verdict.total}`;
  if (state.outcome === "succeeded") return `${state.report_status ?? "done"}${checks}`;
  return `${state.outcome ?? "failed"}${state.report_status && state.report_status !== "failed" ? `/${state.report_status}` : ""}`;
}

/** The role that classifies a task's state (running, a report status, an outcome). */
export function roleOfTaskState(state: TaskStateShape): Role | undefined {
  if (state.phase !== "finished") return state.waiting || state.phase === "queued" ? "muted" : "active";
  if (state.outcome !== "succeeded") return roleOfStatus(state.outcome);
  return roleOfStatus(state.report_status);
}
