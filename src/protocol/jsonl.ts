/**
 * Line-delimited JSON, split safely: chunks may end mid-line, lines may end in \r\n, a runaway line
 * without a newline must not grow memory without bound.
 */
export const MAX_LINE_BYTES = 8 * 1024 * 1024;

export class LineBuffer {
  private pending = "";
  private overflowing = false;
  /** Number of lines dropped because they exceeded the cap. */
  dropped = 0;

  constructor(private readonly maxLineBytes = MAX_LINE_BYTES) {}

  /** Feed a chunk; returns the complete lines it finished (without their terminator). */
  push(chunk: string): string[] {
    const lines: string[] = [];
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf("\n", start);
      if (newline === -1) break;
      const piece = chunk.slice(start, newline);
      if (this.overflowing) {
        this.overflowing = false;
        this.pending = "";
      } else {
        lines.push(stripCr(this.pending + piece));
        this.pending = "";
      }
      start = newline + 1;
    }
    const rest = chunk.slice(start);
    if (!this.overflowing) {
      this.pending += rest;
      if (this.pending.length > this.maxLineBytes) {
        this.pending = "";
        this.overflowing = true;
        this.dropped += 1;
      }
    }
    return lines;
  }

  /** What is left without a terminating newline (a line still being written, or a last line). */
  get rest(): string {
    return this.overflowing ? "" : this.pending;
  }

  /** End of input: the unterminated rest as a final line, if any. */
  flush(): string[] {
    const rest = this.rest;
    this.pending = "";
    this.overflowing = false;
    return rest.length > 0 ? [stripCr(rest)] : [];
  }
}

function stripCr(line: string): string {
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}

/** Parse one line as JSON; `undefined` for blank or non-JSON lines. */
export function parseJsonLine(line: string): unknown {
  const trimmed = line.trim();
  if (trimmed === "" || (trimmed[0] !== "{" && trimmed[0] !== "[")) return undefined;
  try {
    return JSON.parse(trimmed);
  } catch {
    return undefined;
  }
}
