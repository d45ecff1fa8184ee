import { readdirSync } from "node:fs";
import { join } from "node:path";
import { CaesarError } from "../support/errors.js";
import { type ChannelRef, openChannelWithMeta } from "./channel.js";
import type { ChatContext } from "./context.js";
import { invalidArgumentError } from "./errors.js";
import {
  linkTempFile,
  removeIfStale,
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

// A poster whose lock was stolen (it was taken for dead) starts over, a few times at most.
const MAX_ATTEMPTS = 5;
// Predictions a concurrent post proved wrong, rewritten outside the lock before one is written under it.
const MAX_REWRITES = 2;

/**
 * Post a message: write it to a temp file and flush it, take `_seq.lock`, allocate max(seq)+1 from one
 * listing of the folder, link the temp file to its final name, release the lock, flush the folder. The
 * file exists whole or not at all, its content is on disk before its name appears, and its name is on
 * disk before the post returns.
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
  // The message for a sequence, written and flushed to a temp file (the sequence is in its text).
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

  // The flush is the slow part of a post, so it happens before the lock, for the sequence the
  // channel's listing predicts; under the lock the listing is taken again, and when it agrees, only a
  // link remains. When another post came in between, the message is written again for the new
  // prediction outside the lock (MAX_REWRITES times), then under it, as a last resort that always ends.
  let guess = listForPost(channel.dir, undefined, ctx.lockStaleMs).maxSeq + 1;
  let prepared: Prepared | undefined;
  let posted: { message: Prepared; hasReplyTarget: boolean } | undefined;
  let rewrites = 0;
  try {
    for (let attempt = 0; posted === undefined && attempt < MAX_ATTEMPTS; ) {
      if (prepared?.seq !== guess) {
        if (prepared !== undefined) unlinkQuietly(prepared.temp);
        prepared = prepare(guess);
      }
      const lock = await acquireSeqLock(channel.dir, { staleMs: ctx.lockStaleMs });
      try {
        const listing = listForPost(channel.dir, input.replyTo, ctx.lockStaleMs);
        guess = listing.maxSeq + 1;
        if (prepared.seq !== guess) {
          if (rewrites++ < MAX_REWRITES) continue;
          unlinkQuietly(prepared.temp);
          prepared = prepare(guess);
        }
        // Taken for dead meanwhile: the thief may hand out the same sequence, so start over.
        if (lock.stillHeld()) {
          const linked = linkTempFile(prepared.temp, prepared.path);
          if (linked === true) posted = { message: prepared, hasReplyTarget: listing.hasReplyTarget };
          // Removed as stale by another poster (this one waited past the stale timeout): write it again.
          else if (linked === undefined) prepared = undefined;
        }
        attempt++;
      } finally {
        lock.release();
      }
    }
  } finally {
    // After a link, the temp file is a second name of the message: removed once the lock is free.
    if (prepared !== undefined) unlinkQuietly(prepared.temp);
  }
  if (posted === undefined) throw postFailedError(channel);
  // The name and the temp's removal reach the disk before the post reports success.
  syncDirectory(channel.dir);
  const { seq, file, path } = posted.message;
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
 * died (removed once stale: their writer no longer holds the lock).
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
      removeIfStale(join(dir, name), staleMs);
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

function postFailedError(channel: ChannelRef): CaesarError {
  return new CaesarError(
    "post_failed",
    `Could not post to "${channel.name}" after ${MAX_ATTEMPTS} attempts.`,
    {
      detail: `The sequence lock in ${channel.dir} kept being stolen: another poster takes this one for dead. Raise CAESAR_CHAT_LOCK_STALE_MS.`,
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
