import { readdirSync } from "node:fs";
import { join } from "node:path";
import { errnoOf, isCaesarError } from "../support/errors.js";
import { openChannelWithMeta } from "./channel.js";
import { type ClaimHolder, listClaims } from "./claim.js";
import type { ChatContext } from "./context.js";
import { listCursors, readCursor } from "./cursor.js";
import { isRelevantTo } from "./message.js";
import { type ChannelMeta, parseMeta, readMetaText } from "./meta.js";
import { explainBadName, validateName } from "./names.js";
import { loadAll, loadMessages } from "./read.js";
import { scanChannel } from "./scan.js";
import { isTaskMarker } from "./task-marker.js";

export interface ChannelSummary {
  channel: string;
  topic: string;
  members: string[];
  maintainer?: string;
  created: string;
  messages: number;
  max_seq: number;
  last?: { seq: number; from: string; title: string; ts: string };
  /** With `as`: messages after its cursor that concern it. */
  unread?: number;
  /** Set when the channel cannot be used as it is (its `_meta.json` or its name); it is listed all the same. */
  problem?: string;
}

/** Every channel of the root (folders holding `_meta.json`, as the reference lists them), by name. */
export async function listChannels(
  ctx: ChatContext,
  options: { as?: string } = {},
): Promise<ChannelSummary[]> {
  const agent = options.as === undefined ? undefined : validateName(options.as, "agent");
  let names: string[];
  try {
    names = readdirSync(ctx.root);
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return [];
    throw error;
  }
  const summaries: ChannelSummary[] = [];
  // Hidden folders are not channels for the reference either (its glob skips them).
  for (const name of names.filter((name) => !name.startsWith(".")).sort()) {
    const summary = await summarize(ctx, name, agent);
    if (summary) summaries.push(summary);
  }
  return summaries;
}

async function summarize(
  ctx: ChatContext,
  name: string,
  agent?: string,
): Promise<ChannelSummary | undefined> {
  const dir = join(ctx.root, name);
  let text: string | undefined;
  try {
    text = readMetaText(dir);
  } catch {
    text = undefined;
  }
  if (text === undefined) return undefined;
  let meta: ChannelMeta = { channel: name, members: [], topic: "", created: "" };
  let problem = explainBadName(name, "channel");
  if (problem !== undefined) problem = `caesar cannot use this channel: ${problem}`;
  try {
    meta = parseMeta(text, dir, name);
  } catch (error) {
    if (!isCaesarError(error)) throw error;
    problem ??= error.summary;
  }
  const scan = scanChannel(dir);
  const channel = { name, dir };
  const lastEntry = scan.entries.at(-1);
  const last = lastEntry ? loadAll(ctx, channel, [lastEntry]).messages[0] : undefined;
  let unread: number | undefined;
  if (agent !== undefined && problem === undefined) {
    const cursor = (await readCursor(dir, agent)).seq;
    const fresh = scan.entries.filter((entry) => entry.seq > cursor);
    unread = loadMessages(ctx, channel, fresh, (message) => isRelevantTo(message, agent)).messages.length;
  }
  return {
    channel: name,
    topic: meta.topic,
    members: meta.members,
    ...(meta.maintainer === undefined ? {} : { maintainer: meta.maintainer }),
    created: meta.created,
    messages: scan.entries.length,
    max_seq: scan.maxSeq,
    ...(last ? { last: { seq: last.seq, from: last.from, title: last.title, ts: last.ts } } : {}),
    ...(unread === undefined ? {} : { unread }),
    ...(problem === undefined ? {} : { problem }),
  };
}

export interface Roster {
  channel: string;
  topic: string;
  members: string[];
  maintainer?: string;
  approval_bands?: ChannelMeta["approval_bands"];
  veto_window_s?: number;
  /** Messages posted, by sender (members or not). */
  posters: Record<string, number>;
  /** Last sequence read, by cursor file (the agent's slug). */
  cursors: Record<string, number>;
  /** Task markers waiting to be claimed (`task-<id>.md`). */
  tasks: string[];
  claims: (ClaimHolder & { marker: string })[];
  max_seq: number;
}

/** Who is in a channel: its declared members, who posted, who reads (and how far), open and claimed tasks. */
export async function getRoster(ctx: ChatContext, channelName: string): Promise<Roster> {
  const { channel, meta } = openChannelWithMeta(ctx, channelName);
  const scan = scanChannel(channel.dir);
  const { messages } = loadAll(ctx, channel, scan.entries);
  const posters: Record<string, number> = {};
  for (const message of messages) posters[message.from] = (posters[message.from] ?? 0) + 1;
  return {
    channel: channel.name,
    topic: meta.topic,
    members: meta.members,
    ...(meta.maintainer === undefined
      ? {}
      : {
          maintainer: meta.maintainer,
          approval_bands: meta.approval_bands,
          veto_window_s: meta.veto_window_s,
        }),
    posters,
    cursors: await listCursors(channel.dir, ctx.lockStaleMs),
    tasks: readdirSync(channel.dir).filter(isTaskMarker).sort(),
    claims: listClaims(channel.dir).map((claim) => ({ marker: claim.marker, ...claim.holder })),
    max_seq: scan.maxSeq,
  };
}
