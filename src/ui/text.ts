/**
 * Text measured the way a terminal shows it — display columns (string-width: grapheme clusters, so an
 * emoji sequence or a flag is the 2 columns a terminal draws, not 4–6), escape sequences of zero width —
 * and text from agents made safe to print.
 */
import stringWidth from "string-width";
import stripAnsiSequences from "strip-ansi";
import wrapAnsi from "wrap-ansi";

// C0 and C1 controls other than newline and tab, and DEL.
const CONTROL_PATTERN = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

export function stripAnsi(text: string): string {
  return stripAnsiSequences(text);
}

/**
 * Text an agent wrote, made printable: escape sequences and control characters removed (an agent's
 * output must never move the cursor or recolour the screen), tabs turned into two spaces. A sequence
 * strip-ansi does not know loses its ESC byte with the other controls, so it cannot act either.
 */
export function sanitize(text: string): string {
  return stripAnsiSequences(text).replace(/\t/g, "  ").replace(/\r\n?/g, "\n").replace(CONTROL_PATTERN, "");
}

/** Sanitized and on one line: runs of whitespace (newlines included) become one space. */
export function oneLine(text: string): string {
  return sanitize(text).replace(/\s+/g, " ").trim();
}

/** Display width of text, escape sequences excluded. */
export function displayWidth(text: string): number {
  return stringWidth(text);
}

let segmenter: Intl.Segmenter | undefined;

/** The grapheme clusters of plain text: what a terminal draws as one character. */
function graphemes(text: string): Iterable<string> {
  segmenter ??= new Intl.Segmenter();
  return Array.from(segmenter.segment(text), (part) => part.segment);
}

/** Cut plain text to at most `width` columns, ending with `ellipsis` when something was cut. */
export function truncate(text: string, width: number, ellipsis = "…"): string {
  if (width === Number.POSITIVE_INFINITY || displayWidth(text) <= width) return text;
  const room = width - displayWidth(ellipsis);
  if (room <= 0) return ellipsis.slice(0, Math.max(0, width));
  let out = "";
  let used = 0;
  for (const char of graphemes(text)) {
    const w = stringWidth(char);
    if (used + w > room) break;
    out += char;
    used += w;
  }
  return out.trimEnd() + ellipsis;
}

// An escape sequence at the start of painted text (text caesar painted itself: CSI and OSC).
const ANSI_AT_START = /^(?:\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_])/;
const ESCAPE = "\x1b";

/**
 * Cut painted text to at most `width` columns, keeping its escape sequences (and resetting the style
 * after a cut, so a colour never leaks into what follows).
 */
export function truncatePainted(text: string, width: number, ellipsis = "…"): string {
  if (displayWidth(text) <= width) return text;
  const room = Math.max(0, width - displayWidth(ellipsis));
  let out = "";
  let used = 0;
  let rest = text;
  let painted = false;
  while (rest.length > 0) {
    const sequence = ANSI_AT_START.exec(rest);
    if (sequence) {
      out += sequence[0];
      painted = true;
      rest = rest.slice(sequence[0].length);
      continue;
    }
    // The plain run up to the next escape sequence, cut between grapheme clusters.
    const next = rest.indexOf(ESCAPE, 1);
    const run = next === -1 ? rest : rest.slice(0, next);
    for (const char of graphemes(run)) {
      const w = stringWidth(char);
      if (used + w > room) return `${out}${painted ? "\x1b[0m" : ""}${ellipsis}`;
      out += char;
      used += w;
    }
    rest = rest.slice(run.length);
  }
  return `${out}${painted ? "\x1b[0m" : ""}${ellipsis}`;
}

/** Pad (possibly painted) text with spaces to `width` columns. */
export function padEnd(text: string, width: number): string {
  const missing = width - displayWidth(text);
  return missing > 0 ? text + " ".repeat(missing) : text;
}

export function padStart(text: string, width: number): string {
  const missing = width - displayWidth(text);
  return missing > 0 ? " ".repeat(missing) + text : text;
}

/**
 * Word-wrap plain text to `width` columns; explicit newlines are kept, words longer than a line are
 * broken (wrap-ansi, measuring with string-width). An infinite width only splits on newlines.
 */
export function wrap(text: string, width: number): string[] {
  if (width === Number.POSITIVE_INFINITY) return text.split("\n").map((line) => line.trimEnd());
  return wrapAnsi(text, Math.max(1, width), { hard: true, trim: true }).split("\n");
}
