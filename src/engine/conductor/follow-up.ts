import type { CheckResult } from "../../protocol/checks.js";
import { describeCheck } from "./check-verdict.js";

/** How much of the previous attempt's diff a fresh run's brief carries. */
export const FOLLOW_UP_DIFF_BYTES = 40 * 1024;
/** How much of each failing check's output a follow-up quotes. */
const FOLLOW_UP_TAIL_CHARS = 3000;

export interface FollowUpInput {
  /** The attempt about to start (2 for the first follow-up). */
  attempt: number;
  attempts: number;
  checks: CheckResult[];
  workspace: string;
  reportPath: string;
}

/**
 * The message that continues the agent's own session: which checks failed and how, and what to do. The
 * session already holds the task, so this says only what is new.
 */
export function makeFollowUpPrompt(input: FollowUpInput): string {
  const failed = input.checks.filter((check) => !check.passed);
  return [
    `caesar ran its checks after your last turn, and ${failed.length} of ${input.checks.length} failed. This is attempt ${input.attempt} of ${input.attempts}.`,
    `Fix what they show, in the same workspace (${input.workspace}). caesar runs the checks again after you; your work is judged by them, not by your report.`,
    `Then write your report again to ${input.reportPath}: it replaces the previous one.`,
    "",
    ...failedChecks(failed),
  ].join("\n");
}

/**
 * The brief of a new run (an agent whose session cannot be continued): the original brief, then the
 * previous attempt's diff and the failing checks. The workspace still holds the previous changes.
 */
export function makeFreshBrief(input: FollowUpInput & { brief: string; diff: string }): string {
  const failed = input.checks.filter((check) => !check.passed);
  const diff = boundDiff(input.diff);
  return [
    input.brief,
    "",
    "---",
    `This is attempt ${input.attempt} of ${input.attempts} on this task. A previous run worked on it in this same workspace, and caesar's checks failed after it (${failed.length} of ${input.checks.length}).`,
    "Its changes are still in the workspace; the diff against the starting point is below. Build on them or undo them, so that the checks pass: caesar runs them again after you, and your work is judged by them, not by your report.",
    "",
    ...failedChecks(failed),
    "",
    diff === ""
      ? "The previous run left no change in the workspace."
      : `The previous run's changes (git diff against the starting point${diff.length < input.diff.length ? `, first ${FOLLOW_UP_DIFF_BYTES} bytes` : ""}):`,
    ...(diff === "" ? [] : ["```diff", diff.trimEnd(), "```"]),
  ].join("\n");
}

function failedChecks(failed: CheckResult[]): string[] {
  return failed.flatMap((check) => {
    const tail = check.output_tail.trimEnd();
    const quoted =
      tail.length > FOLLOW_UP_TAIL_CHARS ? `…${tail.slice(tail.length - FOLLOW_UP_TAIL_CHARS)}` : tail;
    return [
      `Check \`${check.command}\` failed: ${describeCheck(check)}.`,
      ...(quoted === "" ? ["(no output)"] : ["The end of its output:", "```", quoted, "```"]),
      "",
    ];
  });
}

function boundDiff(diff: string): string {
  const bytes = Buffer.from(diff);
  if (bytes.length <= FOLLOW_UP_DIFF_BYTES) return diff;
  return bytes
    .subarray(0, FOLLOW_UP_DIFF_BYTES)
    .toString("utf8")
    .replace(/\uFFFD+$/, "");
}
