const ESC = "\x1b[";

/**
 * A full-screen view redrawn in place: the terminal's alternate screen (so quitting restores what was
 * there), the cursor hidden, and each redraw rewriting only lines that changed.
 */
export class LiveScreen {
  private previous: string[] = [];
  private active = false;

  constructor(private readonly out: NodeJS.WritableStream) {}

  enter(): void {
    if (this.active) return;
    this.active = true;
    this.out.write(`${ESC}?1049h${ESC}?25l${ESC}H${ESC}2J`);
  }

  /** Draw `lines` (each already fitted to the width, at most the height of the screen). */
  draw(lines: string[]): void {
    if (!this.active) return;
    let output = "";
    const rows = Math.max(lines.length, this.previous.length);
    for (let row = 0; row < rows; row++) {
      const line = lines[row] ?? "";
      if (line === this.previous[row]) continue;
      // Clear the whole row first: clearing to the end of a full-width line would erase its last column.
      output += `${ESC}${row + 1};1H${ESC}2K${line}`;
    }
    this.previous = [...lines];
    if (output) this.out.write(output);
  }

  /** Forget what is on the screen (after a resize), so the next draw rewrites every line. */
  invalidate(): void {
    this.previous = [];
    if (this.active) this.out.write(`${ESC}H${ESC}2J`);
  }

  leave(): void {
    if (!this.active) return;
    this.active = false;
    this.out.write(`${ESC}0m${ESC}?25h${ESC}?1049l`);
  }
}
