import type { Part } from "../event-line.js";
import { truncate, truncatePainted } from "../text.js";
import type { Theme } from "../theme.js";
import { questionBlock, splitLine, taskBlock } from "./task-block.js";
import {
  type Condition,
  conditionOf,
  isVisible,
  orderTasks,
  pendingQuestions,
  type WatchedTask,
} from "./watched-task.js";

export { FINISHED_LINGER_MS, SILENCE_MS, type WatchedTask } from "./watched-task.js";

/** How the screen is drawn: theme, size, clock. */
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

function clock(now: number): string {
  const date = new Date(now);
  return [date.getHours(), date.getMinutes(), date.getSeconds()]
    .map((n) => String(n).padStart(2, "0"))
    .join(":");
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
    return fitScreen(lines, options);
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
  return fitScreen(lines, options);
}

/** A line wider than the terminal would wrap and shift every row below it: nothing may exceed the width. */
function fitScreen(lines: string[], options: WatchScreenOptions): string[] {
  const height = options.height ?? Number.POSITIVE_INFINITY;
  return lines.slice(0, height).map((line) => truncatePainted(line, options.width, options.theme.ellipsis));
}
