import type { CaesarEvent } from "../../protocol/event.js";
import { PROTOCOLS } from "../../protocol/versions.js";
import { EventLineFormatter } from "../event-line.js";
import { detectTerminal } from "../terminal.js";
import { makeTheme, type Theme } from "../theme.js";
import { LiveScreen } from "./live-screen.js";
import { mergeByTime } from "./merge.js";
import { RefreshLoop } from "./refresh-loop.js";
import { renderWatchScreen } from "./screen.js";
import { type TaskEvents, WatchSource } from "./source.js";

type OutStream = NodeJS.WritableStream & {
  isTTY?: boolean;
  columns?: number;
  rows?: number;
  on(event: "resize", listener: () => void): unknown;
  off(event: "resize", listener: () => void): unknown;
};

type InStream = NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };

export interface WatchSessionOptions {
  root: string;
  /** Task ids (already resolved); none: every running task. */
  ids?: string[] | undefined;
  once: boolean;
  json: boolean;
  stdout: OutStream;
  stdin?: InStream | undefined;
  env?: Record<string, string | undefined>;
}

/** Width of a screen printed to something that is not a terminal and says no COLUMNS. */
const DEFAULT_WIDTH = 100;
const CLOCK_TICK_MS = 1000;

/**
 * `caesar watch`: on a terminal, a screen redrawn in place until `q` or Ctrl-C; elsewhere one line per
 * event, or NDJSON events with --json; with --once, what there is now. Reads task directories only.
 * Resolves to the exit code.
 */
export async function runWatch(options: WatchSessionOptions): Promise<number> {
  const env = options.env ?? process.env;
  const capabilities = detectTerminal(options.stdout, env);
  const theme = makeTheme(capabilities);
  const source = new WatchSource(options.root, options.ids?.length ? options.ids : undefined);
  if (options.json) return followEvents(source, options, (changes) => writeJson(options.stdout, changes));
  if (options.once) {
    await source.refresh();
    const lines = renderWatchScreen(source.tasks(), {
      theme,
      width: capabilities.width ?? DEFAULT_WIDTH,
      now: Date.now(),
    });
    options.stdout.write(`${lines.join("\n")}\n`);
    return 0;
  }
  if (!capabilities.isTTY) {
    const printer = new LinePrinter(theme);
    return followEvents(source, options, (changes) => options.stdout.write(printer.lines(changes)));
  }
  return watchLive(source, options, theme);
}

/** Stop on SIGINT/SIGTERM: returns the function that removes the handlers. */
function onSignals(stop: () => void): () => void {
  const handler = () => stop();
  process.once("SIGINT", handler);
  process.once("SIGTERM", handler);
  return () => {
    process.off("SIGINT", handler);
    process.off("SIGTERM", handler);
  };
}

/** Emit events as they come: everything so far first, merged across tasks in time order. */
async function followEvents(
  source: WatchSource,
  options: WatchSessionOptions,
  emit: (changes: TaskEvents[]) => void,
): Promise<number> {
  const loop = new RefreshLoop(source, (changes) => {
    emit(changes);
    return options.once || source.allNamedFinished();
  });
  const removeSignals = onSignals(() => loop.stop());
  try {
    await loop.start();
  } finally {
    removeSignals();
  }
  return 0;
}

function writeJson(out: NodeJS.WritableStream, changes: TaskEvents[]): void {
  const merged = mergeByTime(changes.map((change) => ({ items: change.events, tag: change.task.id })));
  // JSON.stringify escapes control characters: an event's text never puts an escape sequence on stdout.
  if (merged.length > 0) out.write(merged.map(({ event }) => `${JSON.stringify(event)}\n`).join(""));
}

function clockOf(at: string): string {
  const date = new Date(at);
  if (Number.isNaN(date.getTime())) return "--:--:--";
  return [date.getHours(), date.getMinutes(), date.getSeconds()]
    .map((n) => String(n).padStart(2, "0"))
    .join(":");
}

/** One line per event, prefixed with its time and task: what `caesar watch` prints into a pipe or a log. */
export class LinePrinter {
  private readonly formatters = new Map<string, EventLineFormatter>();
  /** Tasks whose end was printed from their state, for want of a `finished` event. */
  private readonly endedFromState = new Set<string>();

  constructor(private readonly theme: Theme) {}

  lines(changes: TaskEvents[]): string {
    const entries = mergeByTime(
      changes.map((change) => ({
        items: [...change.events, ...this.extraEvents(change)],
        tag: change.task.id,
      })),
    );
    let out = "";
    for (const { event, tag } of entries) {
      // A `finished` event that comes after its end was printed from the state is not printed twice.
      if (event.type === "finished" && event.by !== "agent" && event.seq >= 0 && this.endedFromState.has(tag))
        continue;
      const prefix = `${clockOf(event.at)} ${tag}  `;
      const formatter = this.formatterOf(tag);
      const lines =
        event.type === "question" && event.seq < 0
          ? formatter.question(event.question_id, event.question, event.options)
          : formatter.format(event);
      lines.forEach((line, index) => {
        out += `${index === 0 ? prefix : " ".repeat(prefix.length)}${line}\n`;
      });
    }
    return out;
  }

  private formatterOf(taskId: string): EventLineFormatter {
    let formatter = this.formatters.get(taskId);
    if (!formatter) {
      formatter = new EventLineFormatter({ theme: this.theme, taskId });
      this.formatters.set(taskId, formatter);
    }
    return formatter;
  }

  /**
   * Lines that are not events but belong in the stream: a question asked only through its file, and
   * the end of a task whose stream has no `finished` event. Marked with a negative seq.
   */
  private extraEvents(change: TaskEvents): CaesarEvent[] {
    const { task } = change;
    const extra: CaesarEvent[] = [];
    const common = { protocol: PROTOCOLS.event, seq: -1, task_id: task.id } as const;
    for (const question of change.questions) {
      if (task.activity.questions.has(question.id)) continue;
      extra.push({
        ...common,
        at: new Date(question.askedAt ?? Date.now()).toISOString(),
        type: "question",
        question_id: question.id,
        question: question.question,
        ...(question.options ? { options: question.options } : {}),
      });
    }
    if (change.endedWithoutEvent && !this.endedFromState.has(task.id)) {
      this.endedFromState.add(task.id);
      const { state } = task;
      extra.push({
        ...common,
        at: state.finished_at ?? new Date().toISOString(),
        type: "finished",
        status: state.report_status ?? state.report?.status ?? "failed",
        ...(state.report?.summary ? { summary: state.report.summary } : {}),
        ...(state.outcome ? { outcome: state.outcome } : {}),
      });
    }
    return extra;
  }
}

/** The screen, redrawn in place on every change and every second (ages, silence), until `q` or Ctrl-C. */
async function watchLive(source: WatchSource, options: WatchSessionOptions, theme: Theme): Promise<number> {
  const { stdout, stdin } = options;
  const screen = new LiveScreen(stdout);
  const render = () =>
    screen.draw(
      renderWatchScreen(source.tasks(), {
        theme,
        width: stdout.columns ?? DEFAULT_WIDTH,
        height: stdout.rows,
        now: Date.now(),
        interactive: true,
      }),
    );
  const loop = new RefreshLoop(source, () => {
    render();
    return false;
  });
  const onResize = () => {
    screen.invalidate();
    render();
  };
  const onKey = (data: Buffer | string) => {
    const text = data.toString();
    // q, Q, Ctrl-C (raw mode delivers it as a byte), Ctrl-D
    if (/[qQ\x03\x04]/.test(text)) loop.stop();
  };
  const restore = () => screen.leave();
  const removeSignals = onSignals(() => loop.stop());
  const ticker = setInterval(render, CLOCK_TICK_MS);
  const raw = stdin?.isTTY === true && typeof stdin.setRawMode === "function";
  screen.enter();
  process.once("exit", restore);
  stdout.on("resize", onResize);
  if (raw) {
    stdin.setRawMode!(true);
    stdin.on("data", onKey);
    stdin.resume();
  }
  try {
    await loop.start();
  } finally {
    clearInterval(ticker);
    removeSignals();
    stdout.off("resize", onResize);
    if (raw) {
      stdin.off("data", onKey);
      stdin.setRawMode!(false);
      stdin.pause();
    }
    screen.leave();
    process.off("exit", restore);
  }
  return 0;
}
