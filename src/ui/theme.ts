import { type ColorDepth, detectTerminal, type TerminalCapabilities } from "./terminal.js";

/**
 * The one palette every command uses. Colour classifies — a status, allowed or denied, a severity —
 * and never decorates: primary text (what the agent said, an objective, a path) is never coloured, so
 * a screen reads the same on light and dark backgrounds and without colour at all.
 */
export type Role =
  /** success, succeeded, allowed, a file added */
  | "ok"
  /** failed, denied, an error, a high severity, a file deleted */
  | "fail"
  /** partial, cancelled, silence, a medium severity, a file modified */
  | "warn"
  /** needs a person now: a pending question, blocked */
  | "attention"
  /** in progress: a running tool, a running task */
  | "active"
  /** secondary text: labels, durations, ids beside the primary text */
  | "muted"
  /** emphasis without colour: headers, the question itself */
  | "strong";

// SGR parameters per role for 16, 256 and 24-bit colour. Mid-tones, readable on white and on black.
const PALETTE: Record<Role, [string, string, string]> = {
  ok: ["32", "38;5;35", "38;2;0;160;90"],
  fail: ["31", "38;5;160", "38;2;215;45;45"],
  warn: ["33", "38;5;172", "38;2;205;130;0"],
  attention: ["1;35", "1;38;5;134", "1;38;2;175;85;205"],
  active: ["36", "38;5;31", "38;2;0;135;180"],
  muted: ["2", "38;5;244", "38;2;128;128;128"],
  strong: ["1", "1", "1"],
};

/** Marks, one column each in both sets, so a layout is the same in UTF-8 and in ASCII. */
export interface Marks {
  ok: string;
  fail: string;
  warn: string;
  question: string;
  running: string;
  task: string;
  idle: string;
  sep: string;
  to: string;
  from: string;
  added: string;
  modified: string;
  deleted: string;
  renamed: string;
  openQuote: string;
  closeQuote: string;
}

export const UNICODE_MARKS: Marks = {
  ok: "✓",
  fail: "✗",
  warn: "!",
  question: "?",
  running: "▸",
  task: "●",
  idle: "○",
  sep: "·",
  to: "→",
  from: "←",
  added: "+",
  modified: "~",
  deleted: "-",
  renamed: "→",
  openQuote: "“",
  closeQuote: "”",
};

export const ASCII_MARKS: Marks = {
  ok: "+",
  fail: "x",
  warn: "!",
  question: "?",
  running: ">",
  task: "*",
  idle: "o",
  sep: "-",
  to: ">",
  from: "<",
  added: "+",
  modified: "~",
  deleted: "-",
  renamed: ">",
  openQuote: '"',
  closeQuote: '"',
};

/** Box-drawing characters for table frames. */
export interface Frame {
  h: string;
  v: string;
  topLeft: string;
  topRight: string;
  bottomLeft: string;
  bottomRight: string;
  top: string;
  bottom: string;
  left: string;
  right: string;
  cross: string;
}

export const UNICODE_FRAME: Frame = {
  h: "─",
  v: "│",
  topLeft: "┌",
  topRight: "┐",
  bottomLeft: "└",
  bottomRight: "┘",
  top: "┬",
  bottom: "┴",
  left: "├",
  right: "┤",
  cross: "┼",
};

export const ASCII_FRAME: Frame = {
  h: "-",
  v: "|",
  topLeft: "+",
  topRight: "+",
  bottomLeft: "+",
  bottomRight: "+",
  top: "+",
  bottom: "+",
  left: "+",
  right: "+",
  cross: "+",
};

export interface Theme {
  color: ColorDepth;
  unicode: boolean;
  marks: Marks;
  frame: Frame;
  ellipsis: string;
  /** Text in a role's colour; unchanged when colour is off. */
  paint(role: Role | undefined, text: string): string;
}

export interface ThemeOptions {
  color: ColorDepth;
  unicode: boolean;
}

export function makeTheme(options: ThemeOptions): Theme {
  const { color, unicode } = options;
  return {
    color,
    unicode,
    marks: unicode ? UNICODE_MARKS : ASCII_MARKS,
    frame: unicode ? UNICODE_FRAME : ASCII_FRAME,
    ellipsis: unicode ? "…" : "...",
    paint(role, text) {
      if (color === 0 || role === undefined || text === "") return text;
      return `\x1b[${PALETTE[role][color - 1]}m${text}\x1b[0m`;
    },
  };
}

/** The theme for a stream, from what its terminal can show. */
export function themeFor(
  stream: { isTTY?: boolean; columns?: number; rows?: number },
  env: Record<string, string | undefined> = process.env,
): Theme {
  return themeFromCapabilities(detectTerminal(stream, env));
}

export function themeFromCapabilities(capabilities: Pick<TerminalCapabilities, "color" | "unicode">): Theme {
  return makeTheme({ color: capabilities.color, unicode: capabilities.unicode });
}

/** The role of a status word: report statuses, process outcomes, tool statuses, task phases. */
export function roleOfStatus(status: string | null | undefined): Role | undefined {
  switch (status) {
    case "success":
    case "succeeded":
    case "allowed":
      return "ok";
    case "failed":
    case "timed_out":
    case "denied":
      return "fail";
    case "partial":
    case "cancelled":
      return "warn";
    case "blocked":
      return "attention";
    case "started":
    case "running":
    case "preparing":
    case "finishing":
      return "active";
    case "queued":
      return "muted";
    default:
      return undefined;
  }
}

/** The mark that goes with a status word. */
export function markOfStatus(theme: Theme, status: string | null | undefined): string {
  switch (roleOfStatus(status)) {
    case "ok":
      return theme.marks.ok;
    case "fail":
      return theme.marks.fail;
    case "warn":
      return theme.marks.warn;
    case "attention":
      return theme.marks.question;
    case "active":
      return theme.marks.running;
    default:
      return theme.marks.idle;
  }
}

/** The mark and role of a file change (added, deleted, renamed, modified). */
export function changeMark(theme: Theme, action: string): [mark: string, role: Role | undefined] {
  const m = theme.marks;
  if (action === "added") return [m.added, "ok"];
  if (action === "deleted") return [m.deleted, "fail"];
  if (action === "renamed") return [m.renamed, undefined];
  return [m.modified, "warn"];
}

/** A status word with its mark, painted in its role. */
export function paintStatus(theme: Theme, status: string, text = status.replace(/_/g, " ")): string {
  return theme.paint(roleOfStatus(status), `${markOfStatus(theme, status)} ${text}`);
}

export const SEVERITY_ORDER = ["critical", "high", "medium", "low", "info"] as const;

export function roleOfSeverity(severity: string): Role | undefined {
  switch (severity) {
    case "critical":
    case "high":
      return "fail";
    case "medium":
      return "warn";
    case "info":
      return "muted";
    default:
      return undefined;
  }
}
