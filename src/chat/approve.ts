import { CaesarError } from "../support/errors.js";
import { type ChannelRef, openChannel } from "./channel.js";
import type { ChatContext } from "./context.js";
import { APPROVED, isMaintainer, NEEDS_APPROVAL, NOTIFY, notMaintainerError, VETOED } from "./governance.js";
import type { ChatMessage } from "./message.js";
import { readMeta } from "./meta.js";
import { validateName } from "./names.js";
import { type PostResult, postMessage } from "./post.js";
import { loadAll } from "./read.js";
import { scanChannel } from "./scan.js";

export interface ApproveOptions {
  as: string;
  /** Post `vetoed` instead of `approved`. */
  veto?: boolean;
  note?: string;
}

export interface ApproveResult extends PostResult {
  /** The message decided on. */
  target: { seq: number; from: string; title: string; status: string; action?: string };
}

/**
 * The maintainer's decision on a message: a reply with `status: approved` (or `vetoed`) addressed to
 * its sender, `reply_to` its sequence. Anyone else is refused.
 */
export async function approveMessage(
  ctx: ChatContext,
  channelName: string,
  seq: number,
  options: ApproveOptions,
): Promise<ApproveResult> {
  const agent = validateName(options.as, "agent");
  const channel = await openChannel(ctx, channelName);
  const meta = await readMeta(channel.dir, channel.name);
  if (!isMaintainer(meta, agent)) throw notMaintainerError(channel.name, agent, meta);
  const { target, messages } = findMessage(ctx, channel, seq);
  const warnings: string[] = [];
  if (target.status !== NEEDS_APPROVAL && target.status !== NOTIFY)
    warnings.push(
      `#${seq} has status ${target.status}, not ${NEEDS_APPROVAL}: nothing was waiting for this decision`,
    );
  const earlier = decisionOn(messages, seq, agent);
  if (earlier) warnings.push(`#${seq} was already ${earlier.status} in #${earlier.seq}`);
  const verb = options.veto === true ? "Vetoed" : "Approved";
  const posted = await postMessage(ctx, channel.name, {
    from: agent,
    to: [target.from],
    replyTo: seq,
    status: options.veto === true ? VETOED : APPROVED,
    title: `${verb}: ${target.title || `#${seq}`}`,
    body: options.note ?? "",
  });
  return {
    ...posted,
    warnings: [...warnings, ...posted.warnings],
    target: {
      seq,
      from: target.from,
      title: target.title,
      status: target.status,
      ...(target.extra.action === undefined ? {} : { action: target.extra.action }),
    },
  };
}

export type ApprovalState = "approved" | "vetoed" | "pending" | "veto-window-passed" | "not-requested";

export interface ApprovalStatus {
  seq: number;
  state: ApprovalState;
  action?: string;
  /** The maintainer's decision message, when there is one. */
  decided_in?: number;
  veto_until?: string;
}

/**
 * Where a request stands: only replies from the channel's maintainer count, so a hand-written
 * `status: approved` from anyone else changes nothing.
 */
export async function getApprovalStatus(
  ctx: ChatContext,
  channelName: string,
  seq: number,
): Promise<ApprovalStatus> {
  const channel = await openChannel(ctx, channelName);
  const meta = await readMeta(channel.dir, channel.name);
  const { target, messages } = findMessage(ctx, channel, seq);
  const action = target.extra.action;
  const base = { seq, ...(action === undefined ? {} : { action }) };
  const decision = meta.maintainer === undefined ? undefined : decisionOn(messages, seq, meta.maintainer);
  if (decision) return { ...base, state: decision.status as "approved" | "vetoed", decided_in: decision.seq };
  if (target.status === NEEDS_APPROVAL) return { ...base, state: "pending" };
  if (target.status === NOTIFY) {
    const vetoUntil = target.extra.veto_until ?? "";
    const passed = vetoUntil !== "" && Date.parse(vetoUntil) <= ctx.now().getTime();
    return { ...base, state: passed ? "veto-window-passed" : "pending", veto_until: vetoUntil };
  }
  return { ...base, state: "not-requested" };
}

function decisionOn(messages: ChatMessage[], seq: number, maintainer: string): ChatMessage | undefined {
  return messages.find(
    (message) =>
      message.reply_to === seq &&
      message.from === maintainer &&
      (message.status === APPROVED || message.status === VETOED),
  );
}

function findMessage(
  ctx: ChatContext,
  channel: ChannelRef,
  seq: number,
): { target: ChatMessage; messages: ChatMessage[] } {
  const { messages, skipped } = loadAll(ctx, channel, scanChannel(channel.dir).entries);
  const target = messages.find((message) => message.seq === seq);
  if (target) return { target, messages };
  const broken = skipped.find((file) => file.seq === seq);
  throw new CaesarError(
    "message_not_found",
    broken
      ? `Message #${seq} in "${channel.name}" cannot be read: ${broken.problem}.`
      : `No message #${seq} in "${channel.name}".`,
    { detail: `\`caesar chat peek ${channel.name}\` shows the latest messages and their numbers.` },
  );
}
