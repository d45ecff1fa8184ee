import type { TaskState } from "../../engine/store/state.js";
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

export type Condition = "question" | "silent" | "running" | "waiting" | "gone" | "finished";

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

export function timeOf(iso: string | null | undefined): number | undefined {
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

export function conditionOf(task: WatchedTask, now: number): Condition {
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
