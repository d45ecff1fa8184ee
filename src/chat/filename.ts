import { slugify } from "./names.js";

/**
 * Message file names: `NNNN-<from>-<title>.md` — the sequence zero-padded to at least 4 digits (a
 * sequence past 9999 simply has more digits; order is by the number, never by the name's text), then
 * the reference implementation's slugs of the sender and the title.
 */
export function formatMessageFileName(seq: number, from: string, title: string): string {
  return `${String(seq).padStart(4, "0")}-${slugify(from)}-${slugify(title)}.md`;
}

/**
 * The sequence of a message file name, or undefined when the name is not a message: names starting
 * with `_` or `.` never are (metadata, locks, cursors, temp files), nor are names without a leading
 * number and `-`, nor names not ending in `.md` (so another tool's `0012-x.md.tmp` is never read
 * half-written). Sequence 0 is not a message either (sequences start at 1).
 */
export function parseMessageFileName(name: string): number | undefined {
  // By hand rather than with a regular expression: a post parses every name of the channel.
  let seq = 0;
  let index = 0;
  for (; index < name.length; index++) {
    const code = name.charCodeAt(index);
    if (code < 48 || code > 57) break;
    seq = seq * 10 + (code - 48);
  }
  if (index === 0 || name.charCodeAt(index) !== 45 || !name.endsWith(".md")) return undefined;
  return Number.isSafeInteger(seq) && seq > 0 ? seq : undefined;
}

/**
 * Temp files of caesar's atomic writes (`.<name>.<where>.<pid>.<start>.<hex>.tmp`, see
 * exclusive-file.ts; an older caesar's `.<name>.<pid>.<hex>.tmp` matches too): a writer killed between
 * creating one and renaming or linking it leaves it behind.
 */
const TEMP_FILE = /^\..+\.\d+\.[0-9a-f]+\.tmp$/;

export function isTempFileName(name: string): boolean {
  return TEMP_FILE.test(name);
}
