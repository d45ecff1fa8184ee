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
  /** Files passed over for good (not messages, or unreadable past the settle time). */
  skipped: SkippedFile[];
  /**
   * A file still being written (empty or cut short, and young): delivery stopped before it and the
   * cursor stays below it, so the next read or wait picks it up once whole.
   */
  pending?: SkippedFile;
  warnings: string[];
}

/**
 * Deliver the messages after the agent's cursor that concern it, then move the cursor to the highest
 * sequence of the same scan: a message that arrives meanwhile is left for the next read, never
 * skipped unseen (see `scanForRead` for why a scan may be taken twice). A file caught while being
 * written stops the delivery, and the cursor stays below it. Files that are not messages for good are
 * reported in `skipped` and passed over, so each is reported once, not forever.
 */
export async function readMessages(
  ctx: ChatContext,
  channelName: string,
  options: ReadOptions,
): Promise<ReadResult> {
  const agent = validateName(options.as, "agent");
  const channel = await openChannel(ctx, channelName);
  const cursor = await readCursor(channel.dir, agent);
  const scan = scanForRead(channel.dir, cursor.seq);
  const fresh = scan.entries.filter((entry) => entry.seq > cursor.seq);
  const loaded = loadMessages(ctx, channel, fresh, (message) =>
    options.all === true ? true : isRelevantTo(message, agent),
  );
  const top = loaded.pending === undefined ? scan.maxSeq : loaded.pending.seq - 1;
  const after = options.peek === true ? cursor.seq : await advanceCursor(channel.dir, agent, top);
  return {
    channel: channel.name,
    as: agent,
    cursor: { before: cursor.seq, after },
    max_seq: scan.maxSeq,
    messages: loaded.messages,
    skipped: loaded.skipped,
    ...(loaded.pending === undefined ? {} : { pending: loaded.pending }),
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
export function scanForRead(dir: string, cursor: number, scan = scanChannel): ChannelScan {
  const first = scan(dir);
  const top = first.maxSeq;
  const seen = new Set(first.entries.map((entry) => entry.seq));
  let complete = true;
  for (let seq = cursor + 1; seq <= top && complete; seq++) complete = seen.has(seq);
  if (complete) return first;
  const second = scan(dir);
  return { entries: second.entries.filter((entry) => entry.seq <= top), maxSeq: top };
}

export interface PeekResult {
  channel: string;
  max_seq: number;
  messages: ChatMessage[];
  /** Files among the last `limit` that are not messages, or not whole yet. */
  skipped: SkippedFile[];
}

/** The last `limit` messages of a channel, whoever they are for; no cursor is read or moved. */
export async function peekMessages(
  ctx: ChatContext,
  channelName: string,
  limit: number,
): Promise<PeekResult> {
  const channel = await openChannel(ctx, channelName);
  const scan = scanChannel(channel.dir);
  const last = scan.entries.slice(Math.max(0, scan.entries.length - Math.max(0, limit)));
  const { messages, skipped } = loadAll(ctx, channel, last);
  return { channel: channel.name, max_seq: scan.maxSeq, messages, skipped };
}

/**
 * Load `entries` in order, keeping the messages `keep` accepts and reporting what is not a message;
 * stop at the first file still being written (`pending`).
 */
export function loadMessages(
  ctx: ChatContext,
  channel: ChannelRef,
  entries: MessageEntry[],
  keep: (message: ChatMessage) => boolean,
): { messages: ChatMessage[]; skipped: SkippedFile[]; pending?: SkippedFile } {
  const messages: ChatMessage[] = [];
  const skipped: SkippedFile[] = [];
  const clock = { now: Date.now(), settleMs: ctx.settleMs };
  for (const entry of entries) {
    const loaded = loadMessage(channel.dir, entry, channel.name, clock);
    if (loaded.state === "pending")
      return { messages, skipped, pending: { seq: entry.seq, file: entry.file, problem: loaded.problem } };
    if (loaded.state === "skip") skipped.push({ seq: entry.seq, file: entry.file, problem: loaded.problem });
    else if (keep(loaded.message)) messages.push(loaded.message);
  }
  return { messages, skipped };
}

/** Every message of `entries` as it is now, a file still being written reported as skipped (no cursor). */
export function loadAll(
  ctx: ChatContext,
  channel: ChannelRef,
  entries: MessageEntry[],
): { messages: ChatMessage[]; skipped: SkippedFile[] } {
  const messages: ChatMessage[] = [];
  const skipped: SkippedFile[] = [];
  const clock = { now: Date.now(), settleMs: ctx.settleMs };
  for (const entry of entries) {
    const loaded = loadMessage(channel.dir, entry, channel.name, clock);
    if (loaded.state === "ok") messages.push(loaded.message);
    else skipped.push({ seq: entry.seq, file: entry.file, problem: loaded.problem });
  }
  return { messages, skipped };
}
