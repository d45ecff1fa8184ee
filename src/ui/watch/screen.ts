import type { TaskState } from "../../engine/state.js";
import { formatElapsed } from "../elapsed.js";
import { answerCommand, fitParts, type Part } from "../event-line.js";
import { displayWidth, oneLine, padEnd, sanitize, truncate, wrap } from "../text.js";
import { markOfStatus, type Role, roleOfStatus, type Theme } from "../theme.js";
import type { AskedQuestion, TaskActivity } from "./activity.js";

/** Past this long without an event, a running task is shown as silent. */
export const SILENCE_MS = 30_000;
/** How long a finished task stays on the screen (with its report status). */
export const FINISHED_LINGER_MS = 5 * 60_000;

/** A task as `caesar watch` sees it: its state, its folded events, its question files, its liveness. */
export interface WatchedTask {
  id: string;
  state: TaskState;
  activity: TaskActivity;
  /** Questions found as `questions/<id>.json`. */
  fileQuestions: AskedQuestion[];
  /** Ids of the `answers/<id>.json` files. */
  answeredIds: ReadonlySet<string>;
  /** Is its conductor still running? */
  live: boolean;
  /** Named on the command line: shown whatever its age. */
  named: boolean;
}

export interface WatchScreenOptions {
  theme: Theme;
  width: number;
  /** Rows available; lines beyond are replaced by a count of the tasks not shown. */
  height?: number | undefined;
  /** The clock (milliseconds since the epoch). */
  now: number;
  /** Redrawn live with a key to quit (the header says so). */
  interactive?: boolean;
}

type Condition = "question" | "silent" | "running" | "waiting" | "gone" | "finished";

/** Questions with no answer yet: asked by event or file, answered by neither. */
export function pendingQuestions(task: WatchedTask): AskedQuestion[] {
  if (task.state.phase === "finished") return [];
  const all = new Map<string, AskedQuestion>();
  for (const question of task.fileQuestions) all.set(question.id, question);
  for (const question of task.activity.questions.values())
    if (!all.has(question.id)) all.set(question.id, question);
  return [...all.values()]
    .filter((question) => !task.activity.answered.has(question.id) && !task.answeredIds.has(question.id))
    .sort((a, b) => (a.askedAt ?? 0) - (b.askedAt ?? 0));
}

function timeOf(iso: string | null | undefined): number | undefined {
  if (!iso) return undefined;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Milliseconds since the task's last sign of life: its last event, else its start. */
export function silenceOf(task: WatchedTask, now: number): number {
  const since =
    task.activity.lastEventAt ?? timeOf(task.state.started_at) ?? timeOf(task.state.created_at) ?? now;
  return Math.max(0, now - since);
}

function conditionOf(task: WatchedTask, now: number): Condition {
  const { phase } = task.state;
  if (phase === "finished") return "finished";
  if (!task.live) return "gone";
  if (pendingQuestions(task).length > 0) return "question";
  if (phase !== "running") return "waiting";
  return silenceOf(task, now) >= SILENCE_MS ? "silent" : "running";
}

/** Is the task on the screen: running, or named, or finished (or abandoned) a few minutes ago at most. */
export function isVisible(task: WatchedTask, now: number): boolean {
  if (task.named) return true;
  const condition = conditionOf(task, now);
  if (condition === "finished") {
    const ended = timeOf(task.state.finished_at) ?? timeOf(task.state.updated_at) ?? 0;
    return now - ended <= FINISHED_LINGER_MS;
  }
  if (condition === "gone") {
    const last = Math.max(task.activity.lastEventAt ?? 0, timeOf(task.state.updated_at) ?? 0);
    return now - last <= FINISHED_LINGER_MS;
  }
  return true;
}

const CONDITION_RANK: Record<Condition, number> = {
  question: 0,
  silent: 1,
  running: 1,
  waiting: 1,
  gone: 2,
  finished: 3,
};

/** Tasks waiting for an answer first (oldest question first), then running by start, then finished, newest first. */
export function orderTasks(tasks: WatchedTask[], now: number): WatchedTask[] {
  const key = (task: WatchedTask) => {
    const condition = conditionOf(task, now);
    const time =
      condition === "question"
        ? (pendingQuestions(task)[0]?.askedAt ?? 0)
        : condition === "finished"
          ? -(timeOf(task.state.finished_at) ?? 0)
          : (timeOf(task.state.started_at) ?? timeOf(task.state.created_at) ?? 0);
    return { rank: CONDITION_RANK[condition], time };
  };
  return [...tasks].sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    return ka.rank - kb.rank || ka.time - kb.time || a.id.localeCompare(b.id);
  });
}

function clock(now: number): string {
  const date = new Date(now);
  return [date.getHours(), date.getMinutes(), date.getSeconds()]
    .map((n) => String(n).padStart(2, "0"))
    .join(":");
}

function ago(theme: Theme, since: number | undefined, now: number): string {
  return since === undefined ? "" : ` ${theme.marks.sep} ${formatElapsed(Math.max(0, now - since))} ago`;
}

/** A line with `left` parts and a right-aligned `right`, in `width` columns. */
function splitLine(left: Part[], right: string, width: number, theme: Theme): string {
  const rightWidth = displayWidth(right);
  const fixed = left.filter((part) => !part.flex).reduce((sum, part) => sum + displayWidth(part.text), 0);
  // The right side goes first when the fixed parts leave it no room.
  if (rightWidth === 0 || fixed + 2 + rightWidth > width) return fitParts(left, width, theme);
  const leftText = fitParts(left, Math.max(10, width - rightWidth - 2), theme);
  return padEnd(leftText, width - rightWidth) + right;
}

function questionBlock(task: WatchedTask, question: AskedQuestion, options: WatchScreenOptions): string[] {
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
  lines.push(
    `  ${theme.paint("muted", `answer ${m.to} `)}${theme.paint("strong", answerCommand(task.id, question.id))}`,
  );
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
      if (status) return [markOfStatus(theme, status), roleOfStatus(status), status];
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

function taskBlock(task: WatchedTask, options: WatchScreenOptions): string[] {
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

/**
 * The screen of `caesar watch`, as lines of at most `width` columns: a header, the pending questions
 * (above everything, with the command that answers them), then one block per task — id, agent, age,
 * mode and isolation, the objective, and one headline.
 */
export function renderWatchScreen(tasks: WatchedTask[], options: WatchScreenOptions): string[] {
  const { theme, width, now } = options;
  const m = theme.marks;
  const visible = orderTasks(
    tasks.filter((task) => isVisible(task, now)),
    now,
  );
  const conditions = visible.map((task) => conditionOf(task, now));
  const count = (wanted: Condition[]) => conditions.filter((c) => wanted.includes(c)).length;
  const questions = visible.flatMap((task) => pendingQuestions(task).map((question) => ({ task, question })));
  const counts = (
    [
      { text: `${count(["running", "silent", "waiting", "question"])} running` },
      {
        text: questions.length > 0 ? `${questions.length} question${questions.length === 1 ? "" : "s"}` : "",
        role: "attention",
      },
      { text: count(["silent"]) > 0 ? `${count(["silent"])} silent` : "", role: "warn" },
      { text: count(["finished"]) > 0 ? `${count(["finished"])} finished` : "" },
    ] as Part[]
  ).filter((part) => part.text !== "");
  const summary = counts.flatMap((part, index) =>
    index === 0 ? [part] : [{ text: ` ${m.sep} `, role: "muted" as const }, part],
  );
  const header = splitLine(
    [{ text: "caesar watch  ", role: "strong" }, ...summary],
    theme.paint("muted", options.interactive ? `${clock(now)}  q quits` : clock(now)),
    width,
    theme,
  );
  const lines = [header, ""];
  for (const { task, question } of questions) lines.push(...questionBlock(task, question, options), "");
  if (visible.length === 0) {
    lines.push(
      theme.paint(
        "muted",
        truncate("No task running. Tasks appear here when they start.", width, theme.ellipsis),
      ),
    );
    return lines;
  }
  const blocks = visible.map((task) => taskBlock(task, options));
  const height = options.height ?? Number.POSITIVE_INFINITY;
  for (let index = 0; index < blocks.length; index++) {
    const block = blocks[index]!;
    const remaining = blocks.length - index - 1;
    const room = height - lines.length - (remaining > 0 ? 1 : 0);
    if (block.length > room && index > 0) {
      const hidden = blocks.length - index;
      lines.push(
        theme.paint(
          "muted",
          truncate(
            `${theme.ellipsis} ${hidden} more task${hidden === 1 ? "" : "s"} (name some: caesar watch <id>…)`,
            width,
            theme.ellipsis,
          ),
        ),
      );
      break;
    }
    lines.push(...block);
    if (remaining > 0) lines.push("");
  }
  return lines.slice(0, height);
}
