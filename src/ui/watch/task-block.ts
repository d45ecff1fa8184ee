import { checksVerdict } from "../../protocol/checks.js";
import { formatElapsed } from "../elapsed.js";
import { answerCommand, fitParts, type Part } from "../event-line.js";
import { displayWidth, oneLine, padEnd, sanitize, truncate, wrap } from "../text.js";
import { markOfStatus, type Role, roleOfStatus, type Theme } from "../theme.js";
import type { AskedQuestion } from "./activity.js";
import type { WatchScreenOptions } from "./screen.js";
import {
  type Condition,
  conditionOf,
  pendingQuestions,
  silenceOf,
  timeOf,
  type WatchedTask,
} from "./watched-task.js";

function ago(theme: Theme, since: number | undefined, now: number): string {
  return since === undefined ? "" : ` ${theme.marks.sep} ${formatElapsed(Math.max(0, now - since))} ago`;
}

/** A line with `left` parts and a right-aligned `right`, in `width` columns. */
export function splitLine(left: Part[], right: string, width: number, theme: Theme): string {
  const rightWidth = displayWidth(right);
  const fixed = left.filter((part) => !part.flex).reduce((sum, part) => sum + displayWidth(part.text), 0);
  // The right side goes first when the fixed parts leave it no room.
  if (rightWidth === 0 || fixed + 2 + rightWidth > width) return fitParts(left, width, theme);
  const leftText = fitParts(left, Math.max(10, width - rightWidth - 2), theme);
  return padEnd(leftText, width - rightWidth) + right;
}

export function questionBlock(
  task: WatchedTask,
  question: AskedQuestion,
  options: WatchScreenOptions,
): string[] {
  const { theme, width, now } = options;
  const m = theme.marks;
  const lines = [
    fitParts(
      [
        { text: `${m.question} `, role: "attention" },
        { text: task.id, role: "attention" },
        { text: " asks", role: "attention" },
        { text: `  ${question.id}${ago(theme, question.askedAt, now)}`, role: "muted" },
      ],
      width,
      theme,
    ),
  ];
  const text = wrap(oneLine(question.question), width - 2);
  const shown = text.slice(0, 3);
  if (text.length > 3)
    shown[2] = truncate(`${shown[2]} ${text.slice(3).join(" ")}`, width - 2, theme.ellipsis);
  for (const line of shown) lines.push(`  ${theme.paint("strong", line)}`);
  if (question.options && question.options.length > 0) {
    lines.push(
      `  ${fitParts(
        [
          { text: "options ", role: "muted" },
          { text: question.options.map(oneLine).join(" | "), flex: true },
        ],
        width - 2,
        theme,
      )}`,
    );
  }
  const command = answerCommand(task.id, question.id);
  const prompt = `answer ${m.to} `;
  if (displayWidth(prompt + command) <= width - 2) {
    lines.push(`  ${theme.paint("muted", prompt)}${theme.paint("strong", command)}`);
  } else {
    // Narrow: the command on a line of its own, so it can still be read (and copied) whole when it fits.
    lines.push(`  ${theme.paint("muted", prompt.trimEnd())}`, `    ${theme.paint("strong", command)}`);
  }
  return lines;
}

function statusOf(
  task: WatchedTask,
  condition: Condition,
  options: WatchScreenOptions,
): [string, Role | undefined, string] {
  const { theme, now } = options;
  const m = theme.marks;
  const { state } = task;
  switch (condition) {
    case "question":
      return [m.question, "attention", "question"];
    case "silent":
      return [m.warn, "warn", `silent ${formatElapsed(silenceOf(task, now))}`];
    case "running":
      return [m.task, "active", "running"];
    case "waiting":
      return [m.idle, roleOfStatus(state.phase), state.phase];
    case "gone":
      return [m.warn, "warn", "conductor gone"];
    case "finished": {
      const status = state.report_status ?? state.report?.status ?? task.activity.finished?.status;
      const verdict = checksVerdict(state.report?.checks);
      const checks = verdict.state === "none" ? "" : ` ${m.sep} checks ${verdict.passed}/${verdict.total}`;
      if (status) return [markOfStatus(theme, status), roleOfStatus(status), `${status}${checks}`];
      const outcome = state.outcome ?? "failed";
      return [markOfStatus(theme, outcome), roleOfStatus(outcome), outcome.replace(/_/g, " ")];
    }
  }
}

function headlineOf(task: WatchedTask, condition: Condition, options: WatchScreenOptions): Part[] {
  const { theme, now } = options;
  const m = theme.marks;
  const { state, activity } = task;
  if (condition === "finished") {
    const summary =
      state.report?.summary ??
      activity.finished?.summary ??
      state.error?.message ??
      (activity.lastMessage ? `${m.openQuote}${activity.lastMessage.text}${m.closeQuote}` : "no report");
    return [
      { text: oneLine(summary), flex: true },
      {
        text:
          timeOf(state.finished_at) === undefined
            ? ""
            : `  finished ${formatElapsed(Math.max(0, now - timeOf(state.finished_at)!))} ago`,
        role: "muted",
      },
    ];
  }
  if (condition === "gone") {
    const pid = state.conductor?.pid;
    return [
      {
        text: `its conductor${pid ? ` (pid ${pid})` : ""} exited before finishing; \`caesar status ${task.id}\` settles it`,
        role: "warn",
        flex: true,
      },
    ];
  }
  if (condition === "question") {
    const question = pendingQuestions(task)[0]!;
    return [
      { text: `${m.question} `, role: "attention" },
      { text: "waiting for an answer: ", role: "attention" },
      { text: oneLine(question.question), flex: true },
    ];
  }
  if (state.phase === "queued" && state.waiting_for_slot && state.waiting_for_slot.length > 0) {
    return [
      { text: "waiting for a slot, held by ", role: "muted" },
      { text: state.waiting_for_slot.map((holder) => holder.task_id).join(", "), flex: true },
    ];
  }
  const running = activity.tools.running();
  const current = running[running.length - 1];
  if (current) {
    const more = running.length > 1 ? `  (+${running.length - 1} running)` : "";
    return [
      { text: `${m.running} `, role: "active" },
      { text: oneLine(current.tool || "tool") },
      { text: current.input ? `  ${oneLine(current.input)}` : "", flex: true },
      {
        text: `${current.startedAt === undefined ? "" : ` ${m.sep} ${formatElapsed(Math.max(0, now - current.startedAt))}`}${more}`,
        role: "muted",
      },
    ];
  }
  if (activity.lastMessage) {
    return [{ text: `${m.openQuote}${oneLine(activity.lastMessage.text)}${m.closeQuote}`, flex: true }];
  }
  if (activity.lastTool) {
    const call = activity.lastTool;
    const ok = call.status === "succeeded";
    return [
      { text: `${ok ? m.ok : m.fail} `, role: ok ? "ok" : "fail" },
      { text: oneLine(call.tool || "tool") },
      { text: call.input ? `  ${oneLine(call.input)}` : "", flex: true },
      {
        text: call.durationMs === undefined ? "" : ` ${m.sep} ${formatElapsed(call.durationMs)}`,
        role: "muted",
      },
    ];
  }
  if (state.phase !== "running")
    return [{ text: state.phase === "preparing" ? "preparing the workspace" : state.phase, role: "muted" }];
  return [{ text: "no event yet", role: "muted" }];
}

export function taskBlock(task: WatchedTask, options: WatchScreenOptions): string[] {
  const { theme, width, now } = options;
  const m = theme.marks;
  const { state } = task;
  const condition = conditionOf(task, now);
  const [mark, role, status] = statusOf(task, condition, options);
  const started = timeOf(state.started_at) ?? timeOf(state.created_at);
  const age =
    condition === "finished"
      ? started !== undefined && timeOf(state.finished_at) !== undefined
        ? `took ${formatElapsed(timeOf(state.finished_at)! - started)}`
        : "finished"
      : started !== undefined
        ? formatElapsed(Math.max(0, now - started))
        : "";
  const agent = state.role ? `${state.agent} (${state.role})` : state.agent;
  const facts = [age, state.mode, state.isolation].filter(Boolean).join(` ${m.sep} `);
  const first = splitLine(
    [
      { text: `${mark} `, role },
      { text: task.id, role: "strong" },
      { text: `  ${oneLine(agent)}` },
      { text: ` ${m.sep} ${facts}`, role: "muted", flex: true },
    ],
    theme.paint(role, `${mark} ${status}`),
    width,
    theme,
  );
  const objective = `  ${truncate(oneLine(sanitize(state.objective).split("\n")[0] ?? ""), width - 2, theme.ellipsis)}`;
  const headline = `  ${fitParts(headlineOf(task, condition, options), width - 2, theme)}`;
  return [first, objective, headline];
}
