import { readdirSync } from "node:fs";
import { join } from "node:path";
import { CaesarError } from "../support/errors.js";
import { type ChannelRef, openChannelWithMeta } from "./channel.js";
import type { ChatContext } from "./context.js";
import { invalidArgumentError } from "./errors.js";
import {
  linkTempFile,
  removeIfWriterGone,
  syncDirectory,
  unlinkQuietly,
  writeTempFile,
} from "./exclusive-file.js";
import { formatMessageFileName, isTempFileName, parseMessageFileName } from "./filename.js";
import { checkDecisionStatus, type GovernancePlan, planGovernance } from "./governance.js";
import { DEFAULT_STATUS, formatMessage, isBroadcast } from "./message.js";
import type { ChannelMeta } from "./meta.js";
import { BROADCAST_NAMES, validateName } from "./names.js";
import { MAX_MESSAGE_BYTES } from "./scan.js";
import { acquireSeqLock } from "./seq-lock.js";

export interface PostInput {
  from: string;
  title: string;
  /** Recipients; empty or absent means everyone (`to: all`). */
  to?: string[];
  replyTo?: number;
  status?: string;
  body?: string;
  /** Governance: the action this message asks about (`merge`, `deploy`…), which sets its band. */
  action?: string;
}

export interface PostResult {
  channel: string;
  seq: number;
  file: string;
  path: string;
  from: string;
  to: string[];
  status: string;
  title: string;
  governance?: GovernancePlan;
  /** Things worth knowing that did not stop the post (unknown member, reply to a missing message). */
  warnings: string[];
}

// A poster whose lock was taken from it (another tool took it for dead) starts over, a few times at most.
const MAX_ATTEMPTS = 5;

/**
 * Post a message: take `_seq.lock`, allocate max(seq)+1 from one listing of the folder, write the file
 * to a temp file and flush it, link it to its final name, release the lock, flush the folder. The file
 * exists whole or not at all, its content is on disk before its name appears, and its name is on disk
 * before the post returns.
 */
export async function postMessage(
  ctx: ChatContext,
  channelName: string,
  input: PostInput,
): Promise<PostResult> {
  const { channel, meta } = openChannelWithMeta(ctx, channelName);
  const from = validateName(input.from, "agent");
  const title = oneLine(input.title);
  if (title === "")
    throw invalidArgumentError("The title is empty.", "Give the message a one-line title (--title).");
  const to = normalizeRecipients(input.to ?? []);
  const requestedStatus = input.status === undefined ? undefined : oneLine(input.status);
  if (requestedStatus === "")
    throw invalidArgumentError("The status is empty.", "Omit --status or give a label.");
  const governance =
    input.action === undefined ? undefined : planGovernance(meta, input.action, requestedStatus, ctx.now());
  const status = governance?.status ?? requestedStatus ?? DEFAULT_STATUS;
  checkDecisionStatus(meta, from, status);
  if (input.replyTo !== undefined && !(Number.isSafeInteger(input.replyTo) && input.replyTo > 0))
    throw invalidArgumentError(
      `reply_to ${input.replyTo} is not a sequence number.`,
      "Pass a positive integer.",
    );
  const body = input.body ?? "";
  if (body.includes("\u0000"))
    throw invalidArgumentError(
      "The body contains NUL characters: a chat message is text.",
      "Post text; put binary content in a file and name it in the message.",
    );
  const warnings = rosterWarnings(meta, from, to);
  const ts = ctx.now();
  const extra = governance?.extra ?? [];
  const replyTo = input.replyTo === undefined ? {} : { reply_to: input.replyTo };
  // The message for a sequence, written and flushed to a temp file (the sequence is in its text), under
  // the lock. Flushing it before the lock, for a predicted sequence, was measured (bench/chat): one
  // more listing per post, and with concurrent posters most predictions were overtaken, so the flush
  // was paid two or three times; docs/chat.md#speed has the numbers.
  const prepare = (seq: number): Prepared => {
    const file = formatMessageFileName(seq, from, title);
    const path = join(channel.dir, file);
    const text = formatMessage({
      seq,
      from,
      to,
      ...replyTo,
      channel: channel.name,
      ts,
      status,
      title,
      body,
      extra,
    });
    const bytes = Buffer.byteLength(text);
    if (bytes > MAX_MESSAGE_BYTES) throw messageTooLargeError(bytes);
    return { seq, file, path, temp: writeTempFile(path, text) };
  };

  let prepared: Prepared | undefined;
  let posted: { message: Prepared; hasReplyTarget: boolean } | undefined;
  try {
    for (let attempt = 0; posted === undefined && attempt < MAX_ATTEMPTS; attempt++) {
      const lock = await acquireSeqLock(channel.dir, { staleMs: ctx.lockStaleMs });
      try {
        const listing = listForPost(channel.dir, input.replyTo, ctx.lockStaleMs);
        if (prepared !== undefined) unlinkQuietly(prepared.temp);
        prepared = prepare(listing.maxSeq + 1);
        // Taken for dead while writing (by a tool that judges by age alone): the thief may hand out the
        // same sequence, so start over.
        if (lock.stillHeld() && linkTempFile(prepared.temp, prepared.path) === true)
          posted = { message: prepared, hasReplyTarget: listing.hasReplyTarget };
      } finally {
        lock.release();
      }
    }
  } finally {
    // After a link, the temp file is a second name of the message: removed once the lock is free.
    if (prepared !== undefined) unlinkQuietly(prepared.temp);
  }
  if (posted === undefined) throw postFailedError(channel);
  const { seq, file, path } = posted.message;
  // The name and the temp's removal reach the disk before the post reports success.
  try {
    syncDirectory(channel.dir);
  } catch (error) {
    throw notFlushedError(channel, file, error);
  }
  if (input.replyTo !== undefined && !posted.hasReplyTarget)
    warnings.push(`reply_to ${input.replyTo}: no such message in ${channel.name}`);
  return { channel: channel.name, seq, file, path, from, to, status, title, governance, warnings };
}

/** A message written and flushed to a temp file, for the sequence it was written for. */
interface Prepared {
  seq: number;
  file: string;
  path: string;
  temp: string;
}

/**
 * One listing of the channel, under the lock: the highest sequence among every `NNNN-….md` name
 * (whatever the entry is), whether the replied-to message exists, and temp files left by writers that
 * died (removed by the lock's rule: see removeIfWriterGone).
 */
function listForPost(
  dir: string,
  replyTo: number | undefined,
  staleMs: number,
): { maxSeq: number; hasReplyTarget: boolean } {
  let maxSeq = 0;
  let hasReplyTarget = false;
  for (const name of readdirSync(dir)) {
    const seq = parseMessageFileName(name);
    if (seq !== undefined) {
      if (seq > maxSeq) maxSeq = seq;
      if (seq === replyTo) hasReplyTarget = true;
    } else if (name.charCodeAt(0) === 46 && isTempFileName(name)) {
      removeIfWriterGone(join(dir, name), staleMs);
    }
  }
  return { maxSeq, hasReplyTarget };
}

function messageTooLargeError(bytes: number): CaesarError {
  return new CaesarError(
    "message_too_large",
    `The message is ${bytes} bytes; a chat message is at most ${MAX_MESSAGE_BYTES} bytes (1 MiB).`,
    {
      detail:
        "Put the large content in a file (in the repository, say) and post its path, or split it into several messages.",
      data: { bytes, limit: MAX_MESSAGE_BYTES },
    },
  );
}

function notFlushedError(channel: ChannelRef, file: string, cause: unknown): CaesarError {
  return new CaesarError(
    "post_not_flushed",
    `${file} is in "${channel.name}", but the folder could not be flushed to disk: ${(cause as Error).message}`,
    {
      detail:
        "Readers can see the message, but it may not survive a power loss. Check the disk (full, read-only, failing) before relying on it; posting it again would make a second message.",
      data: { file },
    },
  );
}

function postFailedError(channel: ChannelRef): CaesarError {
  return new CaesarError(
    "post_failed",
    `Could not post to "${channel.name}" after ${MAX_ATTEMPTS} attempts.`,
    {
      detail: `The sequence lock in ${channel.dir} kept being taken from this poster while it held it: another tool takes it for dead (the reference implementation does so after 30 s unchanged), or someone removes it by hand.`,
    },
  );
}

/** A title or a status on one line, as the reference writes it: line breaks and other controls become spaces. */
function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
}

function normalizeRecipients(raw: string[]): string[] {
  const names = raw
    .flatMap((item) => item.split(","))
    .map((name) => name.trim())
    .filter(Boolean);
  if (names.length === 0 || names.some((name) => BROADCAST_NAMES.has(name))) return ["all"];
  return [...new Set(names.map((name) => validateName(name, "agent")))];
}

function rosterWarnings(meta: ChannelMeta, from: string, to: string[]): string[] {
  if (meta.members.length === 0) return [];
  const members = new Set([...meta.members, meta.maintainer ?? ""]);
  const strangers = [from, ...(isBroadcast(to) ? [] : to)].filter((name) => !members.has(name));
  return [...new Set(strangers)].map((name) => `${name} is not a member of ${meta.channel}`);
}
