import type { Command } from "commander";
import type { QuestionWithAnswer } from "../../engine/questions.js";
import type { TaskState } from "../../engine/state.js";
import { formatDuration } from "../../support/duration.js";
import { type CommandDefinition, handle, withCommonOptions } from "../command.js";

export const statusCommand: CommandDefinition = {
  name: "status",
  group: "follow",
  define(program: Command) {
    return withCommonOptions(
      program
        .command("status")
        .description("one task: where it is, how it ended, its report")
        .argument("<id>", "task id (or a unique prefix)"),
    ).action(
      handle(async (ctx, id) => {
        const { loadLiveTask } = await import("../task-lookup.js");
        const { readTaskFile } = await import("../../engine/task-store.js");
        const record = await loadLiveTask(ctx.root, String(id), "status");
        const { listQuestions } = await import("../../engine/questions.js");
        const task = await readTaskFile(record.dir).catch(() => undefined);
        const questions = await listQuestions(record.dir).catch(() => []);
        ctx.out.result(
          { id: record.id, dir: record.dir, state: record.state, task: task ?? null, questions },
          () => renderStatus(record.state, record.dir, questions),
        );
      }),
    );
  },
};

export function renderStatus(state: TaskState, dir: string, questions: QuestionWithAnswer[] = []): string {
  const lines: string[] = [];
  const row = (label: string, value: string | null | undefined) => {
    if (value) lines.push(`${label.padEnd(11)}${value}`);
  };
  row("task", `${state.id}  (change #${state.change_number ?? "?"})`);
  row("objective", state.objective);
  row(
    "agent",
    `${state.agent}${state.role ? ` (role ${state.role})` : ""} · ${state.mode} · ${state.isolation}${state.depth ? ` · depth ${state.depth}` : ""}`,
  );
  row("phase", state.phase === "finished" ? `finished — ${state.outcome ?? "?"}` : state.phase);
  if (state.waiting_for_slot)
    row("waiting", `for a slot: ${state.waiting_for_slot.map((h) => h.task_id).join(", ")}`);
  row("parent", state.parent_id);
  row("workspace", state.workspace);
  row("branch", state.branch);
  row("base", state.base_ref?.slice(0, 12));
  if (state.started_at) {
    const end = state.finished_at ? Date.parse(state.finished_at) : Date.now();
    row("ran", formatDuration(end - Date.parse(state.started_at)));
  }
  row("error", state.error?.message);
  row("applied", state.applied ? `${state.applied.at} (${state.applied.files.length} file(s))` : null);
  const report = state.report;
  if (report) {
    lines.push("");
    row(
      "report",
      `${report.status} — from ${report.report_source}; changes verified by ${report.changes_verified_by}`,
    );
    row("summary", report.summary);
    for (const change of report.changes)
      lines.push(`${"".padEnd(11)}${change.action.padEnd(9)}${change.path}`);
    for (const finding of report.findings) lines.push(`finding    [${finding.severity}] ${finding.title}`);
    for (const step of report.next_steps) lines.push(`next step  ${step}`);
  }
  for (const { question, answer } of questions) {
    lines.push(
      `question   ${question.id}  ${question.question}${question.options ? ` [${question.options.join(" | ")}]` : ""}`,
    );
    lines.push(
      answer
        ? `${"".padEnd(11)}answered: ${answer.answer}`
        : `${"".padEnd(11)}open — caesar answer ${state.id} ${question.id} "<answer>"`,
    );
  }
  lines.push("", `files      ${dir}`);
  return lines.join("\n");
}
