import type { CaesarEvent, EventType } from "../protocol/event.js";
import { formatElapsed } from "./elapsed.js";
import { reportInMessage } from "./report-message.js";
import { displayWidth, oneLine, sanitize, truncate, wrap } from "./text.js";
import { markOfStatus, type Role, roleOfStatus, type Theme } from "./theme.js";
import type { ClosedToolCall } from "./tool-calls.js";
import { ToolCallTracker } from "./tool-calls.js";

/** The label of each event type, in a column of fixed width so a stream can be scanned. */
export const EVENT_LABELS: Record<EventType, string> = {
  started: "start",
  tool_use: "tool",
  message: "agent",
  thinking: "think",
  file_changed: "file",
  progress: "progress",
  question: "question",
  answer: "answer",
  error: "error",
  finished: "done",
};

export const LABEL_WIDTH = 9;
const MIN_BODY_WIDTH = 20;

/** A piece of a line: text, its role, and whether it may be cut to make the line fit. */
export interface Part {
  text: string;
  role?: Role | undefined;
  flex?: boolean;
}

export interface EventLineOptions {
  theme: Theme;
  /** The task the events belong to (named in the command that answers a question). */
  taskId: string;
  /** Columns available; omitted or Infinity: lines are never cut nor wrapped. */
  width?: number | undefined;
}

/** The command a person types to answer a question. */
export function answerCommand(taskId: string, questionId: string): string {
  return `caesar answer ${taskId} ${questionId} "<text>"`;
}

/** Join parts into one painted line of at most `width` columns, cutting the flexible part. */
export function fitParts(parts: Part[], width: number, theme: Theme): string {
  const fixed = parts.filter((part) => !part.flex).reduce((sum, part) => sum + displayWidth(part.text), 0);
  let room = width - fixed;
  return parts
    .map((part) => {
      let text = part.text;
      if (part.flex) {
        text = truncate(text, Math.max(room, theme.ellipsis.length), theme.ellipsis);
        room -= displayWidth(text);
      }
      return theme.paint(part.role, text);
    })
    .join("")
    .trimEnd();
}

/**
 * Turns events into lines for a person: `<label>  <body>`, one event per line (a message or a
 * question may take several), a tool when it starts and again when it ends with its duration.
 * Stateful only to pair tool starts with their ends.
 */
export class EventLineFormatter {
  private readonly theme: Theme;
  private readonly taskId: string;
  private readonly bodyWidth: number;
  private readonly tools = new ToolCallTracker();

  constructor(options: EventLineOptions) {
    this.theme = options.theme;
    this.taskId = options.taskId;
    const width = options.width ?? Number.POSITIVE_INFINITY;
    this.bodyWidth = Math.max(MIN_BODY_WIDTH, width - LABEL_WIDTH);
  }

  format(event: CaesarEvent): string[] {
    const { theme } = this;
    const m = theme.marks;
    switch (event.type) {
      case "started":
        return [
          this.single("start", [
            { text: oneLine(event.agent) },
            { text: event.command ? `  ${oneLine(event.command)}` : "", role: "muted", flex: true },
          ]),
        ];
      case "thinking": {
        // Reasoning summaries come as markdown ("**Title**\n\nText"): on one line, without the markers.
        const text = oneLine(
          event.text.replace(/^\s*\*\*(.+?)\*\*\s+/, "$1: ").replace(/\*\*(.+?)\*\*/g, "$1"),
        );
        return text ? [this.single("think", [{ text, role: "muted", flex: true }])] : [];
      }
      case "message": {
        const gist = reportInMessage(event.text);
        if (gist) {
          return [
            this.single("agent", [
              { text: "report ", role: "muted" },
              { text: `${markOfStatus(theme, gist.status)} ${gist.status}`, role: roleOfStatus(gist.status) },
              { text: ` ${m.sep} `, role: "muted" },
              { text: oneLine(gist.summary), flex: true },
            ]),
          ];
        }
        const text = sanitize(event.text).trim();
        return text ? this.block("agent", undefined, [], text) : [];
      }
      case "tool_use": {
        const closed = this.tools.record(event);
        if (!closed) {
          return [
            this.single("tool", [
              { text: `${m.running} `, role: "active" },
              { text: toolName(event.tool, event.id) },
              { text: event.input_summary ? `  ${oneLine(event.input_summary)}` : "", flex: true },
            ]),
          ];
        }
        return this.toolEnd(closed, event.id);
      }
      case "file_changed": {
        const [mark, role] = fileMark(theme, event.action);
        const known = event.action === undefined || FILE_ACTIONS.has(event.action);
        return [
          this.single("file", [
            { text: `${mark} `, role },
            { text: sanitize(event.path), flex: true },
            { text: known ? "" : `  ${oneLine(event.action ?? "")}`, role: "muted" },
          ]),
        ];
      }
      case "progress":
        return [
          this.single("progress", [
            {
              text: event.pct === undefined ? "" : `${`${Math.round(event.pct)}%`.padStart(4)} `,
              role: "muted",
            },
            { text: oneLine(event.message), flex: true },
          ]),
        ];
      case "question":
        return this.question(event.question_id, event.question, event.options);
      case "answer":
        return [
          this.single("answer", [
            { text: `${m.from} `, role: "muted" },
            { text: oneLine(event.answer), flex: true },
            {
              text: `  ${event.question_id}${event.by ? ` ${m.sep} ${oneLine(event.by)}` : ""}`,
              role: "muted",
            },
          ]),
        ];
      case "error":
        return this.block(
          "error",
          "fail",
          [{ text: `${m.fail} `, role: "fail" }],
          sanitize(event.message).trim() + (event.code ? ` (${oneLine(event.code)})` : ""),
        );
      case "finished": {
        // An agent's own `finished` is what it said of its work, not the task's end: shown as its words.
        if (event.by === "agent")
          return [
            this.single("agent", [
              { text: `says finished: ${event.status}`, role: "muted" },
              { text: event.summary ? ` ${m.sep} ` : "", role: "muted" },
              { text: event.summary ? oneLine(event.summary) : "", flex: true },
              { text: " (the agent's, not the task's end)", role: "muted" },
            ]),
          ];
        // The process outcome only when it says more than the status (a timeout, a cancellation).
        const outcome =
          event.outcome === "timed_out" || event.outcome === "cancelled"
            ? ` (process ${event.outcome.replace(/_/g, " ")})`
            : "";
        return [
          this.single("done", [
            {
              text: `${markOfStatus(theme, event.status)} ${event.status}`,
              role: roleOfStatus(event.status),
            },
            { text: outcome, role: roleOfStatus(event.outcome) },
            { text: event.summary ? ` ${m.sep} ` : "", role: "muted" },
            { text: event.summary ? oneLine(event.summary) : "", flex: true },
          ]),
        ];
      }
    }
  }

  /** The lines of a question: unmissable, and saying how to answer it. */
  question(questionId: string, question: string, options?: string[]): string[] {
    const { theme } = this;
    const indent = " ".repeat(LABEL_WIDTH + 2);
    const lines = this.block(
      "question",
      "attention",
      [{ text: `${theme.marks.question} `, role: "attention" }],
      sanitize(question).trim(),
      "strong",
    );
    if (options && options.length > 0) {
      lines.push(
        indent +
          fitParts(
            [
              { text: "options ", role: "muted" },
              { text: options.map(oneLine).join(" | "), flex: true },
            ],
            this.bodyWidth - 2,
            theme,
          ),
      );
    }
    lines.push(
      indent +
        theme.paint("muted", `answer ${theme.marks.to} `) +
        theme.paint("strong", answerCommand(this.taskId, questionId)),
    );
    return lines;
  }

  private toolEnd(call: ClosedToolCall, id: string): string[] {
    const { theme } = this;
    const ok = call.status === "succeeded";
    const facts = [
      call.exitCode !== undefined && call.exitCode !== null && call.exitCode !== 0
        ? `exit ${call.exitCode}`
        : "",
      call.durationMs !== undefined ? formatElapsed(call.durationMs) : "",
    ].filter(Boolean);
    const lines = [
      this.single("tool", [
        { text: `${ok ? theme.marks.ok : theme.marks.fail} `, role: ok ? "ok" : "fail" },
        { text: toolName(call.tool, id) },
        { text: call.input ? `  ${oneLine(call.input)}` : "", flex: true },
        { text: facts.length > 0 ? `  ${facts.join(` ${theme.marks.sep} `)}` : "", role: "muted" },
      ]),
    ];
    const output = call.output ? oneLine(call.output) : "";
    if (!ok && output) {
      lines.push(
        " ".repeat(LABEL_WIDTH + 2) +
          fitParts([{ text: output, role: "muted", flex: true }], this.bodyWidth - 2, theme),
      );
    }
    return lines;
  }

  private label(label: string, role: Role | undefined): string {
    return this.theme.paint(role ?? "muted", label) + " ".repeat(LABEL_WIDTH - label.length);
  }

  /** One line: the label, then parts fitted to the width. */
  private single(label: string, parts: Part[], labelRole?: Role): string {
    return this.label(label, labelRole) + fitParts(parts, this.bodyWidth, this.theme);
  }

  /** Free text that may take several lines, wrapped under its first line's text. */
  private block(
    label: string,
    labelRole: Role | undefined,
    prefix: Part[],
    text: string,
    textRole?: Role,
  ): string[] {
    const prefixText = prefix.map((part) => this.theme.paint(part.role, part.text)).join("");
    const prefixWidth = prefix.reduce((sum, part) => sum + displayWidth(part.text), 0);
    const lines = wrap(text, this.bodyWidth - prefixWidth);
    const indent = " ".repeat(LABEL_WIDTH + prefixWidth);
    return lines.map((line, index) =>
      index === 0
        ? this.label(label, labelRole) + prefixText + this.theme.paint(textRole, line)
        : indent + this.theme.paint(textRole, line),
    );
  }
}

function toolName(tool: string, id: string): string {
  if (tool) return oneLine(tool);
  return id ? `call ${oneLine(id)}` : "tool";
}

const FILE_ACTIONS = new Set([
  "added",
  "created",
  "modified",
  "edited",
  "changed",
  "deleted",
  "removed",
  "renamed",
]);

function fileMark(theme: Theme, action: string | undefined): [string, Role | undefined] {
  switch (action) {
    case "added":
    case "created":
      return [theme.marks.added, "ok"];
    case "deleted":
    case "removed":
      return [theme.marks.deleted, "fail"];
    case "renamed":
      return [theme.marks.renamed, undefined];
    default:
      return [theme.marks.modified, "warn"];
  }
}
