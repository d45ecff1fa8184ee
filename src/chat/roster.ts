import type { Dirent } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import { errnoOf, isCaesarError } from "../support/errors.js";
import { openChannel } from "./channel.js";
import { type ClaimHolder, listClaims } from "./claim.js";
import type { ChatContext } from "./context.js";
import { listCursors, readCursor } from "./cursor.js";
import { isRelevantTo } from "./message.js";
import { type ChannelMeta, META_FILE, readMeta } from "./meta.js";
import { isValidName, validateName } from "./names.js";
import { loadMessages } from "./read.js";
import { scanChannel } from "./scan.js";

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
  /** Set when `_meta.json` cannot be read (the channel is listed all the same). */
  problem?: string;
}

/** Every channel of the root (folders holding `_meta.json`), by name; an absent root has none. */
export async function listChannels(
  ctx: ChatContext,
  options: { as?: string } = {},
): Promise<ChannelSummary[]> {
  const agent = options.as === undefined ? undefined : validateName(options.as, "agent");
  let dirents: Dirent[];
  try {
    dirents = await readdir(ctx.root, { withFileTypes: true });
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return [];
    throw error;
  }
  const names = dirents.filter((d) => d.isDirectory() && isValidName(d.name, "channel")).map((d) => d.name);
  const summaries: ChannelSummary[] = [];
  for (const name of names.sort()) {
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
  if (!(await isFile(join(dir, META_FILE)))) return undefined;
  let meta: ChannelMeta;
  let problem: string | undefined;
  try {
    meta = await readMeta(dir, name);
  } catch (error) {
    if (!isCaesarError(error)) throw error;
    problem = error.summary;
    meta = { channel: name, members: [], topic: "", created: "" };
  }
  const scan = await scanChannel(dir);
  const channel = { name, dir };
  const lastEntry = scan.entries.at(-1);
  const last = lastEntry ? (await loadMessages(channel, [lastEntry], () => true)).messages[0] : undefined;
  let unread: number | undefined;
  if (agent !== undefined) {
    const cursor = (await readCursor(dir, agent)).seq;
    const fresh = scan.entries.filter((entry) => entry.seq > cursor);
    unread = (await loadMessages(channel, fresh, (message) => isRelevantTo(message, agent))).messages.length;
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

async function isFile(path: string): Promise<boolean> {
  return lstat(path).then(
    (stats) => stats.isFile(),
    () => false,
  );
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
  /** Last sequence read, by agent. */
  cursors: Record<string, number>;
  claims: (ClaimHolder & { marker: string })[];
  max_seq: number;
}

/** Who is in a channel: its declared members, who posted, who reads (and how far), who claimed what. */
export async function getRoster(ctx: ChatContext, channelName: string): Promise<Roster> {
  const channel = await openChannel(ctx, channelName);
  const meta = await readMeta(channel.dir, channel.name);
  const scan = await scanChannel(channel.dir);
  const { messages } = await loadMessages(channel, scan.entries, () => true);
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
    cursors: await listCursors(channel.dir),
    claims: await listClaims(channel.dir),
    max_seq: scan.maxSeq,
  };
}
