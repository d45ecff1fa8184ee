import { closeSync, constants, fstatSync, openSync, readdirSync, readSync } from "node:fs";
import { join } from "node:path";
import { errnoOf } from "../support/errors.js";
import { parseMessageFileName } from "./filename.js";
import { type ChatMessage, parseMessage } from "./message.js";

export interface MessageEntry {
  seq: number;
  file: string;
}

export interface ChannelScan {
  /** Names that are messages by their form (`NNNN-….md`), by sequence (then name). */
  entries: MessageEntry[];
  /** The highest sequence among them, 0 for an empty channel. */
  maxSeq: number;
}

/**
 * The largest message caesar writes, and reads whole. A post above it is refused; a bigger file from
 * another tool is still delivered, its body cut at this size, with a warning naming the file.
 */
export const MAX_MESSAGE_BYTES = 1024 * 1024;

/**
 * List a channel folder's message names in one `readdir`: every `NNNN-….md` name counts, whatever the
 * entry is (a folder or a symbolic link too, so that no sequence is handed out twice), never `_…` or
 * `.…`.
 */
export function scanChannel(dir: string): ChannelScan {
  const entries: MessageEntry[] = [];
  let maxSeq = 0;
  for (const file of readdirSync(dir)) {
    const seq = parseMessageFileName(file);
    if (seq === undefined) continue;
    entries.push({ seq, file });
    if (seq > maxSeq) maxSeq = seq;
  }
  entries.sort((a, b) => a.seq - b.seq || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  return { entries, maxSeq };
}

/**
 * What a message file holds now:
 * - `ok`: a message to deliver (maybe with warnings);
 * - `pending`: not a whole message yet, and young enough that its writer may still be at it — the
 *   reference implementation writes straight to the final name, so a reader can list a file that is
 *   empty or half-written. A reader stops there and leaves its cursor below it, to look again;
 * - `skip`: not a message, for good (a folder, a symbolic link, or a file that stayed unreadable past
 *   the settle time): reported once and passed over.
 */
export type LoadedMessage =
  | { state: "ok"; message: ChatMessage }
  | { state: "pending"; problem: string; settleAt: number }
  | { state: "skip"; problem: string };

export interface SettleClock {
  /** Now, in ms since the epoch. */
  now: number;
  /** A file unchanged for this long is judged as it is: its writer is done, or dead. */
  settleMs: number;
}

// Where the platform has it, refuse to follow a symbolic link swapped in after the scan.
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0);

/** Load one message file. Never throws for the file's content or type. */
export function loadMessage(
  dir: string,
  entry: MessageEntry,
  channel: string,
  clock: SettleClock,
): LoadedMessage {
  let fd: number;
  try {
    fd = openSync(join(dir, entry.file), READ_FLAGS);
  } catch (error) {
    const code = errnoOf(error);
    if (code === "ENOENT") return { state: "skip", problem: "disappeared while being read" };
    if (code === "ELOOP") return { state: "skip", problem: "is a symbolic link" };
    return { state: "skip", problem: `cannot be read (${code ?? (error as Error).message})` };
  }
  try {
    const stats = fstatSync(fd);
    if (stats.isDirectory()) return { state: "skip", problem: "is a folder, not a message" };
    if (!stats.isFile()) return { state: "skip", problem: "is not a regular file" };
    const settleAt = stats.mtimeMs + clock.settleMs;
    const young = clock.now < settleAt;
    const size = Math.min(stats.size, MAX_MESSAGE_BYTES);
    const buffer = Buffer.allocUnsafe(size);
    let read = 0;
    while (read < size) {
      const count = readSync(fd, buffer, read, size - read, read);
      if (count === 0) break;
      read += count;
    }
    const text = buffer.toString("utf8", 0, read);
    const parsed = parseMessage(text, entry.file, entry.seq, channel);
    const truncated = stats.size > MAX_MESSAGE_BYTES;
    // A whole message ends with a line break (caesar's and the reference's writers both end it so).
    const whole = parsed.ok && (truncated || text.endsWith("\n"));
    if (young && (!whole || text === "")) {
      const problem = parsed.ok ? "is still being written" : `${parsed.problem} (yet)`;
      return { state: "pending", problem, settleAt };
    }
    if (!parsed.ok) return { state: "skip", problem: text === "" ? "is empty" : parsed.problem };
    if (truncated) {
      const message = parsed.message;
      message.warnings.push(
        `${entry.file} is ${stats.size} bytes: its body is cut at ${MAX_MESSAGE_BYTES} bytes (read the file for the rest)`,
      );
      message.body = message.body.replace(/\uFFFD$/, "");
    }
    return { state: "ok", message: parsed.message };
  } catch (error) {
    return { state: "skip", problem: `cannot be read (${errnoOf(error) ?? (error as Error).message})` };
  } finally {
    closeSync(fd);
  }
}
