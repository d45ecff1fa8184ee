/**
 * Text measured the way a terminal shows it: display columns rather than string length, escape
 * sequences of zero width, and text from agents made safe to print.
 */

// CSI (colours, cursor moves), OSC (titles, hyperlinks) and two-character escapes.
const ANSI_PATTERN = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;
// C0 and C1 controls other than newline and tab, and DEL.
const CONTROL_PATTERN = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
const ZERO_WIDTH_PATTERN = /^[\p{Mn}\p{Me}\p{Cf}]$/u;
const EMOJI_PATTERN = /^\p{Emoji_Presentation}$/u;

export function stripAnsi(text: string): string {
  return text.replace(ANSI_PATTERN, "");
}

/**
 * Text an agent wrote, made printable: escape sequences and control characters removed (an agent's
 * output must never move the cursor or recolour the screen), tabs turned into two spaces.
 */
export function sanitize(text: string): string {
  return text
    .replace(ANSI_PATTERN, "")
    .replace(/\t/g, "  ")
    .replace(/\r\n?/g, "\n")
    .replace(CONTROL_PATTERN, "");
}

/** Sanitized and on one line: runs of whitespace (newlines included) become one space. */
export function oneLine(text: string): string {
  return sanitize(text).replace(/\s+/g, " ").trim();
}

const WIDE_RANGES: [number, number][] = [
  [0x1100, 0x115f],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe30, 0xfe4f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x1f300, 0x1f64f],
  [0x1f900, 0x1f9ff],
  [0x20000, 0x3fffd],
];

/** Columns one code point takes: 0 (combining, format), 2 (East Asian wide, emoji) or 1. */
export function codePointWidth(char: string): number {
  const code = char.codePointAt(0) ?? 0;
  if (code < 0x20 || (code >= 0x7f && code < 0xa0)) return 0;
  if (code < 0x300) return 1;
  if (ZERO_WIDTH_PATTERN.test(char)) return 0;
  for (const [low, high] of WIDE_RANGES) if (code >= low && code <= high) return 2;
  if (EMOJI_PATTERN.test(char)) return 2;
  return 1;
}

/** Display width of text, escape sequences excluded. */
export function displayWidth(text: string): number {
  let width = 0;
  for (const char of stripAnsi(text)) width += codePointWidth(char);
  return width;
}

/** Cut plain text to at most `width` columns, ending with `ellipsis` when something was cut. */
export function truncate(text: string, width: number, ellipsis = "…"): string {
  if (width === Number.POSITIVE_INFINITY || displayWidth(text) <= width) return text;
  const room = width - displayWidth(ellipsis);
  if (room <= 0) return ellipsis.slice(0, Math.max(0, width));
  let out = "";
  let used = 0;
  for (const char of text) {
    const w = codePointWidth(char);
    if (used + w > room) break;
    out += char;
    used += w;
  }
  return out.trimEnd() + ellipsis;
}

const ANSI_AT_START = /^(?:\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_])/;

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
    const char = String.fromCodePoint(rest.codePointAt(0)!);
    const w = codePointWidth(char);
    if (used + w > room) break;
    out += char;
    used += w;
    rest = rest.slice(char.length);
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
 * broken. An infinite width only splits on newlines.
 */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split("\n")) {
    if (width === Number.POSITIVE_INFINITY || displayWidth(paragraph) <= width) {
      lines.push(paragraph.trimEnd());
      continue;
    }
    let line = "";
    let used = 0;
    for (const word of paragraph.split(/ +/)) {
      const w = displayWidth(word);
      if (used > 0 && used + 1 + w <= width) {
        line += ` ${word}`;
        used += 1 + w;
        continue;
      }
      if (used > 0) lines.push(line);
      line = "";
      used = 0;
      for (const char of word) {
        const cw = codePointWidth(char);
        if (used + cw > width) {
          lines.push(line);
          line = "";
          used = 0;
        }
        line += char;
        used += cw;
      }
    }
    lines.push(line);
  }
  return lines;
}
