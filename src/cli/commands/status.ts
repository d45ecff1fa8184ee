import type { Command } from "commander";
import type { TaskTreeNode } from "../../engine/follow/task-tree.js";
import type { ChildSummary } from "../../engine/lifecycle/subtree.js";
import type { QuestionWithAnswer } from "../../engine/questions/questions.js";
import type { TaskState } from "../../engine/store/state.js";
import { paintChecks } from "../../ui/checks-line.js";
import { formatElapsed } from "../../ui/elapsed.js";
import { renderTaskTrees } from "../../ui/task-tree.js";
import {
  changeMark,
  paintStatus,
  roleOfSeverity,
  roleOfStatus,
  SEVERITY_ORDER,
  type Theme,
  themeFor,
} from "../../ui/theme.js";
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
        const { loadLiveTask } = await import("../../engine/lifecycle/live-task.js");
        const { readTaskFile } = await import("../../engine/store/task-store.js");
        const record = await loadLiveTask(ctx.root, String(id), "status");
        const { listQuestions } = await import("../../engine/questions/questions.js");
        const { listChildren } = await import("../../engine/lifecycle/subtree.js");
        const task = await readTaskFile(record.dir).catch(() => undefined);
        const questions = await listQuestions(record.dir).catch(() => []);
        const children = await listChildren(ctx.root, record.id).catch(() => []);
        const { loadAllTasks } = await import("../../engine/store/task-store.js");
        const { treeOfTask } = await import("../../engine/follow/task-tree.js");
        const all = await loadAllTasks(ctx.root).catch(() => []);
        const tree = treeOfTask(
          all.map((each) => each.state),
          record.id,
        );
        ctx.out.result(
          {
            id: record.id,
            dir: record.dir,
            state: record.state,
            task: task ?? null,
            questions,
            children,
            tree: tree ?? null,
          },
          () => renderStatus(record.state, record.dir, themeFor(process.stdout), questions, children, tree),
        );
      }),
    );
  },
};

export function renderStatus(
  state: TaskState,
  dir: string,
  theme: Theme = themeFor(process.stdout),
  questions: QuestionWithAnswer[] = [],
  children: ChildSummary[] = [],
  tree?: TaskTreeNode,
): string {
  const lines: string[] = [];
  const m = theme.marks;
  const label = (text: string) => theme.paint("muted", text.padEnd(11));
  const row = (name: string, value: string | null | undefined) => {
    if (value) lines.push(`${label(name)}${value}`);
  };
  row("task", `${state.id}  (change #${state.change_number ?? "?"})`);
  row("objective", state.objective);
  row(
    "agent",
    `${state.agent}${state.role ? ` (role ${state.role})` : ""} ${m.sep} ${state.mode} ${m.sep} ${state.isolation}${state.depth ? ` ${m.sep} depth ${state.depth}` : ""}`,
  );
  row(
    "phase",
    state.phase === "finished"
      ? `finished ${m.sep} ${paintStatus(theme, state.outcome ?? "failed", (state.outcome ?? "?").replace(/_/g, " "))}`
      : theme.paint(roleOfStatus(state.phase), state.phase),
  );
  if (state.waiting_for_slot)
    row(
      "waiting",
      state.waiting_for_slot.length === 0
        ? "for a slot"
        : `for a slot, held by ${state.waiting_for_slot.map((h) => h.task_id).join(", ")}`,
    );
  row("parent", state.parent_id);
  if (state.remote) {
    const worker = state.remote.worker;
    row(
      "worker",
      worker
        ? `${worker.id}${worker.host ? ` (${worker.host})` : ""}${state.remote.attempt > 1 ? ` ${m.sep} attempt ${state.remote.attempt}` : ""}`
        : `none yet ${m.sep} in the queue of ${state.remote.servers}`,
    );
    const attempts = state.remote.attempts;
    // Every attempt across workers, once there was more than one (or the one there was ended badly).
    if (attempts.length > 1 || attempts.some((entry) => !["running", "succeeded"].includes(entry.outcome))) {
      for (const entry of attempts) {
        const span = `${entry.started_at}${entry.ended_at ? ` → ${entry.ended_at}` : ""}`;
        const how = `${entry.outcome.replace(/_/g, " ")}${entry.reason ? `: ${entry.reason}` : ""}`;
        row(
          `attempt ${entry.attempt}`,
          `${entry.worker}${entry.host ? ` (${entry.host})` : ""} ${m.sep} ${span} ${m.sep} ${how}`,
        );
      }
    } else {
      for (const lost of state.remote.lost)
        row("lost", `${lost.worker} (attempt ${lost.attempt}, ${lost.at})`);
    }
    row("on worker", state.remote.worktree);
  }
  row("workspace", state.remote ? null : state.workspace);
  row("branch", state.remote ? state.remote.branch : state.branch);
  row("base", state.base_ref?.slice(0, 12));
  if (state.started_at) {
    const end = state.finished_at ? Date.parse(state.finished_at) : Date.now();
    row("ran", formatElapsed(end - Date.parse(state.started_at)));
  }
  if (state.error) row("error", theme.paint("fail", state.error.message));
  if (state.cancel_requested)
    row("cancel", `requested by ${state.cancel_requested.by} (${state.cancel_requested.at})`);
  for (const child of children) {
    const where =
      child.phase === "finished"
        ? `finished ${m.sep} ${paintStatus(theme, child.outcome ?? "failed", (child.outcome ?? "?").replace(/_/g, " "))}`
        : theme.paint(roleOfStatus(child.phase), child.phase);
    const note = child.cancelled_by?.includes(`with its ancestor`)
      ? ` ${m.sep} cancelled with its parent`
      : "";
    row(
      "sub-task",
      `${child.task_id}  ${child.agent} ${m.sep} ${child.bounded ? "bounded" : "independent (keeps running if this one is cancelled)"} ${m.sep} ${where}${note}`,
    );
  }
  row("applied", state.applied ? `${state.applied.at} (${state.applied.files.length} file(s))` : null);
  const report = state.report;
  if (report) {
    lines.push("");
    row(
      "report",
      `${paintStatus(theme, report.status)} ${m.sep} from ${report.report_source}; changes verified by ${report.changes_verified_by}`,
    );
    row("summary", report.summary);
    row("checks", paintChecks(theme, report));
    for (const check of report.checks) {
      const mark = check.passed ? theme.paint("ok", m.ok) : theme.paint("fail", m.fail);
      const how = check.passed
        ? formatElapsed(check.duration_ms)
        : (check.error ?? `exit code ${check.exit_code}`);
      lines.push(`${"".padEnd(11)}${mark} ${check.command}  ${theme.paint("muted", how)}`);
    }
    if (report.attempts.length > 1) {
      row(
        "attempts",
        report.attempts
          .map((attempt) => `${attempt.attempt} ${attempt.checks_passed ? m.ok : m.fail} ${attempt.how}`)
          .join(` ${m.sep} `),
      );
    }
    for (const change of report.changes) {
      const [mark, role] = changeMark(theme, change.action);
      lines.push(`${"".padEnd(11)}${theme.paint(role, `${mark} ${change.action.padEnd(9)}`)}${change.path}`);
    }
    const findings = [...report.findings].sort(
      (a, b) => SEVERITY_ORDER.indexOf(a.severity) - SEVERITY_ORDER.indexOf(b.severity),
    );
    for (const finding of findings)
      lines.push(
        `${label("finding")}${theme.paint(roleOfSeverity(finding.severity), finding.severity.padEnd(9))}${finding.title}`,
      );
    for (const step of report.next_steps) lines.push(`${label("next step")}${step}`);
  }
  for (const { question, answer } of questions) {
    lines.push(
      `${label("question")}${question.id}  ${question.question}${question.options ? ` [${question.options.join(" | ")}]` : ""}`,
    );
    lines.push(
      answer
        ? `${"".padEnd(11)}answered: ${answer.answer}`
        : `${"".padEnd(11)}open — caesar answer ${state.id} ${question.id} "<answer>"`,
    );
  }
  // The whole delegation tree the task belongs to, when it has a parent or children.
  if (tree && tree.children.length > 0) {
    lines.push("", label("tree"));
    lines.push(...renderTaskTrees([tree], { theme, mark: state.id }).map((line) => `  ${line}`));
  }
  lines.push("", `${label("files")}${dir}`);
  return lines.join("\n");
}
