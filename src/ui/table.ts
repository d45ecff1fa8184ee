import { displayWidth, oneLine, padEnd, padStart, truncate } from "./text.js";
import type { Role, Theme } from "./theme.js";

export interface Column {
  header: string;
  align?: "left" | "right";
  /** May be cut (with an ellipsis) to make the table fit; other columns keep their width. */
  flex?: boolean;
  /** The narrowest a flexible column may become (default: its header, at most 12). */
  minWidth?: number;
}

/** A cell: plain text, or text with the role that classifies it (a status, a severity). */
export type Cell = string | { text: string; role?: Role | undefined };

export interface TableOptions {
  theme: Theme;
  /** Columns available; Infinity when the output is not a terminal. */
  width: number;
  /** Draw a frame when it fits (default true); without, or when it cannot fit, aligned columns. */
  frame?: boolean;
}

const FRAME_CELL_PADDING = 3; // "│ " before a cell and " " after it
const COLUMN_GAP = 2;

/**
 * A table that fits the width it is given: framed when the frame fits (cutting flexible columns if
 * needed), else aligned columns without borders — a frame is never drawn wider than the terminal,
 * where its right border would wrap onto the next line.
 */
export function renderTable(columns: Column[], rows: Cell[][], options: TableOptions): string[] {
  const { theme, width } = options;
  const cells = rows.map((row) => columns.map((_, index) => normalizeCell(row[index])));
  const natural = columns.map((column, index) =>
    Math.max(displayWidth(column.header), ...cells.map((row) => displayWidth(row[index]!.text))),
  );
  if (options.frame !== false) {
    const overhead = FRAME_CELL_PADDING * columns.length + 1;
    const widths = fitWidths(columns, natural, width - overhead);
    if (widths) return renderFramed(columns, cells, widths, theme);
  }
  const overhead = COLUMN_GAP * (columns.length - 1);
  const widths =
    fitWidths(columns, natural, width - overhead) ?? shrinkAll(columns, natural, width - overhead);
  return renderColumns(columns, cells, widths, theme);
}

function normalizeCell(cell: Cell | undefined): { text: string; role?: Role | undefined } {
  if (cell === undefined) return { text: "" };
  if (typeof cell === "string") return { text: oneLine(cell) };
  return { text: oneLine(cell.text), role: cell.role };
}

function minWidthOf(column: Column): number {
  return column.minWidth ?? Math.min(12, Math.max(4, displayWidth(column.header)));
}

/** Widths that sum to at most `room`, cutting flexible columns widest first; undefined if impossible. */
function fitWidths(columns: Column[], natural: number[], room: number): number[] | undefined {
  const widths = [...natural];
  let excess = widths.reduce((sum, w) => sum + w, 0) - room;
  while (excess > 0) {
    let widest = -1;
    for (let i = 0; i < columns.length; i++) {
      if (!columns[i]!.flex || widths[i]! <= minWidthOf(columns[i]!)) continue;
      if (widest === -1 || widths[i]! > widths[widest]!) widest = i;
    }
    if (widest === -1) return undefined;
    const floor = minWidthOf(columns[widest]!);
    const cut = Math.min(excess, widths[widest]! - floor, Math.max(1, Math.ceil(excess / 2)));
    widths[widest] = widths[widest]! - cut;
    excess -= cut;
  }
  return widths;
}

/** Last resort without a frame: flexible columns at their minimum; the line may exceed the width. */
function shrinkAll(columns: Column[], natural: number[], _room: number): number[] {
  return natural.map((w, i) => (columns[i]!.flex ? Math.min(w, minWidthOf(columns[i]!)) : w));
}

function cellText(
  column: Column,
  cell: { text: string; role?: Role | undefined },
  width: number,
  theme: Theme,
  last: boolean,
): string {
  const text = truncate(cell.text, width, theme.ellipsis);
  const painted = theme.paint(cell.role, text);
  if (column.align === "right") return padStart(painted, width);
  return last ? painted : padEnd(painted, width);
}

function renderColumns(
  columns: Column[],
  cells: { text: string; role?: Role | undefined }[][],
  widths: number[],
  theme: Theme,
): string[] {
  const gap = " ".repeat(COLUMN_GAP);
  const header = columns
    .map((column, i) => {
      const text = truncate(column.header, widths[i]!, theme.ellipsis);
      const aligned = column.align === "right" ? padStart(text, widths[i]!) : padEnd(text, widths[i]!);
      return theme.paint("strong", aligned);
    })
    .join(gap)
    .trimEnd();
  const lines = [header];
  for (const row of cells) {
    lines.push(
      columns
        .map((column, i) => cellText(column, row[i]!, widths[i]!, theme, i === columns.length - 1))
        .join(gap)
        .trimEnd(),
    );
  }
  return lines;
}

function renderFramed(
  columns: Column[],
  cells: { text: string; role?: Role | undefined }[][],
  widths: number[],
  theme: Theme,
): string[] {
  const f = theme.frame;
  const rule = (left: string, join: string, right: string) =>
    left + widths.map((w) => f.h.repeat(w + 2)).join(join) + right;
  const row = (parts: string[]) => `${f.v} ${parts.join(` ${f.v} `)} ${f.v}`;
  const header = row(
    columns.map((column, i) => {
      const text = truncate(column.header, widths[i]!, theme.ellipsis);
      const aligned = column.align === "right" ? padStart(text, widths[i]!) : padEnd(text, widths[i]!);
      return theme.paint("strong", aligned);
    }),
  );
  const lines = [rule(f.topLeft, f.top, f.topRight), header, rule(f.left, f.cross, f.right)];
  for (const cellRow of cells) {
    lines.push(row(columns.map((column, i) => cellText(column, cellRow[i]!, widths[i]!, theme, false))));
  }
  lines.push(rule(f.bottomLeft, f.bottom, f.bottomRight));
  return lines;
}
