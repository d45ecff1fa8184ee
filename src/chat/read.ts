import type { ChannelRef } from "./channel.js";
import { openChannel } from "./channel.js";
import type { ChatContext } from "./context.js";
import { advanceCursor, readCursor } from "./cursor.js";
import { type ChatMessage, isRelevantTo } from "./message.js";
import { validateName } from "./names.js";
import { type ChannelScan, loadMessage, type MessageEntry, scanChannel } from "./scan.js";

/** A file that looked like a message but could not be delivered, and why. */
export interface SkippedFile {
  seq: number;
  file: string;
  problem: string;
}

export interface ReadOptions {
  as: string;
  /** Every message after the cursor, not only those for `as` (own messages included). */
  all?: boolean;
  /** Leave the cursor where it is. */
  peek?: boolean;
}

export interface ReadResult {
  channel: string;
  as: string;
  cursor: { before: number; after: number };
  /** The highest sequence seen in the scan that delivered these messages. */
  max_seq: number;
  messages: ChatMessage[];
  skipped: SkippedFile[];
  warnings: string[];
}

/**
 * Deliver the messages after the agent's cursor that concern it, then move the cursor to the highest
 * sequence of the same scan: a message that arrives meanwhile is left for the next read, never
 * skipped unseen (see `scanForRead` for why a scan may be taken twice). Malformed files are reported in `skipped` (and passed by the cursor, so a broken
 * file is reported once, not forever).
 */
export async function readMessages(
  ctx: ChatContext,
  channelName: string,
  options: ReadOptions,
): Promise<ReadResult> {
  const agent = validateName(options.as, "agent");
  const channel = await openChannel(ctx, channelName);
  const cursor = await readCursor(channel.dir, agent);
  const scan = await scanForRead(channel.dir, cursor.seq);
  const fresh = scan.entries.filter((entry) => entry.seq > cursor.seq);
  const { messages, skipped } = await loadMessages(channel, fresh, (message) =>
    options.all === true ? true : isRelevantTo(message, agent),
  );
  const after = options.peek === true ? cursor.seq : await advanceCursor(channel.dir, agent, scan.maxSeq);
  return {
    channel: channel.name,
    as: agent,
    cursor: { before: cursor.seq, after },
    max_seq: scan.maxSeq,
    messages,
    skipped,
    warnings: cursor.problem === undefined ? [] : [`cursor ignored: ${cursor.problem}`],
  };
}

/**
 * The messages above `cursor`, complete up to the highest sequence listed. A directory listing taken
 * while files are added is not a snapshot (POSIX leaves unspecified whether an entry added during
 * `readdir` appears; ext4 returns entries in hash order), so a listing may show #12 and miss #11.
 * When the first listing has a gap between the cursor and its top, the folder is listed again: every
 * message up to that top existed before the second listing began (posters write under the lock, in
 * order), so the second listing has them all. Entries above the first listing's top are dropped and
 * left for the next read, and the cursor stops at that top.
 */
export async function scanForRead(dir: string, cursor: number, scan = scanChannel): Promise<ChannelScan> {
  const first = await scan(dir);
  const top = first.maxSeq;
  const seen = new Set(first.entries.map((entry) => entry.seq));
  let complete = true;
  for (let seq = cursor + 1; seq <= top && complete; seq++) complete = seen.has(seq);
  if (complete) return first;
  const second = await scan(dir);
  return { entries: second.entries.filter((entry) => entry.seq <= top), maxSeq: top };
}

export interface PeekResult {
  channel: string;
  max_seq: number;
  messages: ChatMessage[];
  skipped: SkippedFile[];
}

/** The last `limit` messages of a channel, whoever they are for; no cursor is read or moved. */
export async function peekMessages(
  ctx: ChatContext,
  channelName: string,
  limit: number,
): Promise<PeekResult> {
  const channel = await openChannel(ctx, channelName);
  const scan = await scanChannel(channel.dir);
  const last = scan.entries.slice(Math.max(0, scan.entries.length - Math.max(0, limit)));
  const { messages, skipped } = await loadMessages(channel, last, () => true);
  return { channel: channel.name, max_seq: scan.maxSeq, messages, skipped };
}

/** Load `entries` in order, keeping the messages `keep` accepts and reporting the unreadable ones. */
export async function loadMessages(
  channel: ChannelRef,
  entries: MessageEntry[],
  keep: (message: ChatMessage) => boolean,
): Promise<{ messages: ChatMessage[]; skipped: SkippedFile[] }> {
  const messages: ChatMessage[] = [];
  const skipped: SkippedFile[] = [];
  for (const entry of entries) {
    const parsed = await loadMessage(channel.dir, entry, channel.name);
    if (!parsed.ok) skipped.push({ seq: entry.seq, file: entry.file, problem: parsed.problem });
    else if (keep(parsed.message)) messages.push(parsed.message);
  }
  return { messages, skipped };
}
