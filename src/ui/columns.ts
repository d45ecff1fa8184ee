import { displayWidth, padEnd, truncate } from "./text.js";

/** Aligned columns without a frame, measured in display columns; the last column is cut to `lastMax`. */
export function formatColumns(header: string[], rows: string[][], lastMax = 80): string {
  const widths = header.map((h, i) =>
    Math.max(displayWidth(h), ...rows.map((r) => displayWidth(r[i] ?? ""))),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? truncate(cell, lastMax, "") : padEnd(cell, widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}
