import { constants } from "node:fs";
import { open, readdir } from "node:fs/promises";
import { join } from "node:path";
import { errnoOf } from "../support/errors.js";
import { parseMessageFileName } from "./filename.js";
import { type ParsedMessage, parseMessage } from "./message.js";

export interface MessageEntry {
  seq: number;
  file: string;
}

export interface ChannelScan {
  /** Message files, by sequence (then name, should another tool ever have written a duplicate). */
  entries: MessageEntry[];
  /** The highest sequence among them, 0 for an empty channel. */
  maxSeq: number;
}

/** A message larger than this is reported, never read into memory. */
export const MAX_MESSAGE_BYTES = 1024 * 1024;

/** List a channel folder's message files in one `readdir`: regular files only, never `_…` or `.…`. */
export async function scanChannel(dir: string): Promise<ChannelScan> {
  const dirents = await readdir(dir, { withFileTypes: true });
  const entries: MessageEntry[] = [];
  let maxSeq = 0;
  for (const dirent of dirents) {
    const seq = parseMessageFileName(dirent.name);
    if (seq === undefined || !dirent.isFile()) continue;
    entries.push({ seq, file: dirent.name });
    if (seq > maxSeq) maxSeq = seq;
  }
  entries.sort((a, b) => a.seq - b.seq || a.file.localeCompare(b.file));
  return { entries, maxSeq };
}

// Where the platform has it, refuse to follow a symbolic link swapped in after the scan.
const READ_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0);

/** Load one message file. Never throws for the file's content: a bad file gives `{ ok: false, problem }`. */
export async function loadMessage(dir: string, entry: MessageEntry, channel: string): Promise<ParsedMessage> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(join(dir, entry.file), READ_FLAGS);
  } catch (error) {
    const code = errnoOf(error);
    if (code === "ENOENT") return { ok: false, problem: "disappeared while being read" };
    if (code === "ELOOP") return { ok: false, problem: "is a symbolic link" };
    return { ok: false, problem: `cannot be read (${code ?? (error as Error).message})` };
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return { ok: false, problem: "is not a regular file" };
    if (stats.size > MAX_MESSAGE_BYTES)
      return { ok: false, problem: `is larger than ${MAX_MESSAGE_BYTES} bytes` };
    const text = await handle.readFile("utf8");
    return parseMessage(text, entry.file, entry.seq, channel);
  } catch (error) {
    return { ok: false, problem: `cannot be read (${errnoOf(error) ?? (error as Error).message})` };
  } finally {
    await handle.close();
  }
}
