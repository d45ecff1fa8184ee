import type { TaskState } from "../engine/store/state.js";
import type { CaesarEvent } from "../protocol/event.js";
import { formatElapsed } from "./elapsed.js";
import { EventLineFormatter, fitParts, LABEL_WIDTH } from "./event-line.js";
import { renderRunSummary } from "./run-summary.js";
import { detectTerminal } from "./terminal.js";
import { makeTheme, type Theme } from "./theme.js";

/**
 * Renders a task for `caesar run` while it runs: one line per event with a fixed-width label column,
 * a "waiting for a slot" line naming who holds them, then the end summary.
 */
export interface RunRenderer {
  /** The first line: which task, which agent, how it runs. */
  header(state: Pick<TaskState, "id" | "agent" | "mode" | "isolation">): void;
  waiting(holders: { task_id: string; pid: number; since: string }[]): void;
  /** Where a remote task is: in the cluster's queue, or on which worker (said again when it changes). */
  remote(remote: NonNullable<TaskState["remote"]>): void;
  event(event: CaesarEvent): void;
  finished(state: TaskState): void;
}

export interface RunRendererOptions {
  out: NodeJS.WritableStream & { isTTY?: boolean; columns?: number; rows?: number };
  taskId: string;
  /** The theme; by default detected from `out` and the environment (colour, UTF-8). */
  theme?: Theme;
  /** Columns; by default the terminal's width, none (no cutting, no wrapping) when not a terminal. */
  width?: number;
  /** The clock, for ages (injected by tests). */
  now?: () => number;
  env?: Record<string, string | undefined>;
}

export function createRunRenderer(options: RunRendererOptions): RunRenderer {
  const { out } = options;
  const capabilities = detectTerminal(out, options.env ?? process.env);
  const theme = options.theme ?? makeTheme(capabilities);
  const width = options.width ?? (capabilities.isTTY ? capabilities.width : undefined);
  const now = options.now ?? Date.now;
  const formatter = new EventLineFormatter({ theme, taskId: options.taskId, width });
  const write = (lines: string[]) => {
    if (lines.length > 0) out.write(`${lines.join("\n")}\n`);
  };
  let lastWaiting = "";
  let lastPlace = "";
  return {
    header(state) {
      const sep = ` ${theme.marks.sep} `;
      write([
        theme.paint("muted", "task") +
          " ".repeat(LABEL_WIDTH - 4) +
          fitParts(
            [
              {
                text: `${state.id}${sep}${state.agent}${sep}${state.mode}${sep}${state.isolation}`,
                flex: true,
              },
            ],
            Math.max(20, (width ?? Number.POSITIVE_INFINITY) - LABEL_WIDTH),
            theme,
          ),
      ]);
    },
    waiting(holders) {
      const names = holders
        .map((holder) => {
          const since = Date.parse(holder.since);
          const age = Number.isNaN(since) ? "" : `, ${formatElapsed(now() - since)}`;
          return `${holder.task_id} (pid ${holder.pid}${age})`;
        })
        .join(", ");
      const key = holders.map((holder) => holder.task_id).join(",");
      if (key === lastWaiting) return;
      lastWaiting = key;
      const bodyWidth = Math.max(20, (width ?? Number.POSITIVE_INFINITY) - LABEL_WIDTH);
      write([
        theme.paint("muted", "wait") +
          " ".repeat(LABEL_WIDTH - 4) +
          fitParts(
            [
              { text: `${theme.marks.idle} `, role: "muted" },
              { text: holders.length === 0 ? "waiting for a slot" : "waiting for a slot, held by " },
              { text: names, flex: true },
            ],
            bodyWidth,
            theme,
          ),
      ]);
    },
    remote(remote) {
      const place = remote.worker
        ? `on worker ${remote.worker.id}${remote.worker.host ? ` (${remote.worker.host})` : ""}${remote.attempt > 1 ? `, attempt ${remote.attempt}` : ""}`
        : remote.submitted_at
          ? `in the queue of ${remote.servers}, waiting for a worker`
          : `sending to ${remote.servers}`;
      if (place === lastPlace) return;
      lastPlace = place;
      write([
        theme.paint("muted", "where") +
          " ".repeat(LABEL_WIDTH - 5) +
          fitParts(
            [{ text: place, flex: true }],
            Math.max(20, (width ?? Number.POSITIVE_INFINITY) - LABEL_WIDTH),
            theme,
          ),
      ]);
    },
    event(event) {
      write(formatter.format(event));
    },
    finished(state) {
      write(renderRunSummary(state, { theme, width }));
    },
  };
}
