/** Aligned columns without a frame; the last column is cut to `lastMax` characters. */
export function formatColumns(header: string[], rows: string[][], lastMax = 80): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell.slice(0, lastMax) : cell.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}
