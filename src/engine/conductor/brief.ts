import type { Task } from "../../protocol/task.js";
import type { TaskPaths } from "../../protocol/task-dir.js";
import { textCriteria } from "../store/task-plan.js";

/**
 * The prompt an agent receives: its mission, the rules of the mode, and how to hand its report back.
 * Plain text, the same for every agent; the full task stays in task.json.
 */
export function makeBrief(
  task: Task,
  paths: TaskPaths,
  systemPrompt: string | null,
  checks: readonly string[] = [],
): string {
  const parts: string[] = [];
  if (systemPrompt?.trim()) parts.push(systemPrompt.trim(), "");
  parts.push(
    "You are working on a task delegated to you by caesar (OACP v1).",
    "",
    `Objective: ${task.objective}`,
  );
  if (task.context.trim()) parts.push("", "Context:", task.context.trim());
  if (task.constraints.length > 0) parts.push("", "Constraints:", ...task.constraints.map((c) => `- ${c}`));
  const criteria = textCriteria(task.acceptance_criteria);
  if (criteria.length > 0) parts.push("", "Acceptance criteria:", ...criteria.map((c) => `- ${c}`));
  if (checks.length > 0) {
    parts.push(
      "",
      "Checks: when you are done, caesar runs each of these commands in your workspace; the task succeeds only if every one exits 0:",
      ...checks.map((command) => `- \`${command}\``),
    );
  }
  parts.push("");
  if (task.mode === "read-only") {
    parts.push(
      `Mode: read-only. Do not modify, create or delete any file in ${task.workspace}; investigate and report.`,
    );
  } else {
    parts.push(
      `Mode: write. Work in ${task.workspace}${task.isolation === "worktree" ? " (a git worktree of its own: you may commit there)" : ""}.`,
    );
  }
  if (!task.network) parts.push("The network is cut: do not try to reach it.");
  parts.push(
    "",
    `When you are done, write your report as JSON to ${paths.report} (also in $CAESAR_REPORT_PATH), following caesar.report/v1:`,
    '{"protocol":"caesar.report/v1","status":"success|partial|failed|blocked","summary":"…","changes":[{"path":"…","action":"added|modified|deleted"}],"findings":[],"next_steps":[]}',
    'If you cannot write that file, end your final answer with the same JSON in a fenced block that starts with "```json caesar:report".',
    `The whole task is in ${paths.task}.`,
  );
  return parts.join("\n");
}
