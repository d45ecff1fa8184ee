import { rm } from "node:fs/promises";
import { join } from "node:path";
import { CaesarError } from "../support/errors.js";
import { type ChannelRef, openChannel } from "./channel.js";
import type { ChatContext } from "./context.js";
import { invalidArgumentError } from "./errors.js";
import { commitTempFile, writeTempFile } from "./exclusive-file.js";
import { formatMessageFileName } from "./filename.js";
import { checkDecisionStatus, type GovernancePlan, planGovernance } from "./governance.js";
import { DEFAULT_STATUS, formatMessage, isBroadcast } from "./message.js";
import { type ChannelMeta, readMeta } from "./meta.js";
import { BROADCAST_NAMES, slugify, validateName } from "./names.js";
import { scanChannel } from "./scan.js";
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

/**
 * Post a message: take `_seq.lock`, allocate max(seq)+1 from one scan of the folder, write the file
 * whole under its final name, release the lock. The file exists whole or not at all.
 */
export async function postMessage(
  ctx: ChatContext,
  channelName: string,
  input: PostInput,
): Promise<PostResult> {
  const channel = await openChannel(ctx, channelName);
  const meta = await readMeta(channel.dir, channel.name);
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
  const warnings = rosterWarnings(meta, from, to);

  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const lock = await acquireSeqLock(channel.dir, { staleMs: ctx.lockStaleMs });
    try {
      const scan = await scanChannel(channel.dir);
      const seq = scan.maxSeq + 1;
      if (input.replyTo !== undefined && !scan.entries.some((entry) => entry.seq === input.replyTo))
        warnings.push(`reply_to ${input.replyTo}: no such message in ${channel.name}`);
      const file = formatMessageFileName(seq, from, slugify(title));
      const path = join(channel.dir, file);
      const text = formatMessage({
        seq,
        from,
        to,
        ...(input.replyTo === undefined ? {} : { reply_to: input.replyTo }),
        channel: channel.name,
        ts: ctx.now(),
        status,
        title,
        body: input.body ?? "",
        extra: governance?.extra ?? [],
      });
      const temp = await writeTempFile(path, text);
      // Taken for dead while writing: the thief may hand out the same sequence, so start over.
      if (!(await lock.stillHeld())) {
        await rm(temp, { force: true });
        continue;
      }
      if (await commitTempFile(temp, path)) {
        return { channel: channel.name, seq, file, path, from, to, status, title, governance, warnings };
      }
    } finally {
      await lock.release();
    }
  }
  throw postFailedError(channel);
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

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
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
  const members = new Set([...meta.members, meta.maintainer ?? ""].map((member) => member.toLowerCase()));
  const strangers = [from, ...(isBroadcast(to) ? [] : to)].filter((name) => !members.has(name));
  return [...new Set(strangers)].map((name) => `${name} is not a member of ${meta.channel}`);
}
