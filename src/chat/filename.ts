/**
 * Message file names: `NNNN-<from>-<slug>.md`, the sequence zero-padded to at least 4 digits (a
 * sequence past 9999 simply has more digits; order is by the number, never by the name's text).
 */

const MESSAGE_FILE = /^(\d+)-.*\.md$/;

export function formatMessageFileName(seq: number, from: string, slug: string): string {
  return `${String(seq).padStart(4, "0")}-${from}-${slug}.md`;
}

/**
 * The sequence of a message file name, or undefined when the name is not a message: names starting
 * with `_` or `.` never are (metadata, locks, cursors, temp files), nor are names without a leading
 * number and `-`, nor names not ending in `.md` (so another tool's `0012-x.md.tmp` is never read half-written).
 */
export function parseMessageFileName(name: string): number | undefined {
  if (name.startsWith("_") || name.startsWith(".")) return undefined;
  const match = MESSAGE_FILE.exec(name);
  if (!match) return undefined;
  const seq = Number(match[1]);
  return Number.isSafeInteger(seq) && seq > 0 ? seq : undefined;
}
