import { formatTimestamp, isTimestampWithOffset } from "./clock.js";
import { formatFrontmatter, parseFrontmatter, stripComment } from "./frontmatter.js";
import { BROADCAST_NAMES } from "./names.js";

/** One message as caesar hands it out: the frontmatter fields, the body, and where it came from. */
export interface ChatMessage {
  seq: number;
  from: string;
  /** Recipients as written; `["all"]` for a broadcast (`to` absent, `all` or `*`). */
  to: string[];
  reply_to?: number;
  channel: string;
  ts: string;
  status: string;
  title: string;
  body: string;
  /** The file's name inside the channel folder. */
  file: string;
  /** Frontmatter keys beyond the spec's (`action`, `veto_until`, …), as written. */
  extra: Record<string, string>;
  /** What is wrong with the file but did not stop it from being delivered. */
  warnings: string[];
}

export type ParsedMessage = { ok: true; message: ChatMessage } | { ok: false; problem: string };

const KNOWN_KEYS = new Set(["seq", "from", "to", "reply_to", "channel", "ts", "status", "title"]);
export const DEFAULT_STATUS = "discussion";

/** `to` as a list: a single name, a comma list (`bob, carol`), a YAML flow list (`[bob, carol]`), or broadcast. */
export function parseRecipients(raw: string | undefined): string[] {
  const value = stripComment(raw ?? "").replace(/^\[(.*)\]$/, "$1");
  const names = value
    .split(/[,\s]+/)
    .map((name) => name.replace(/^["']|["']$/g, ""))
    .filter((name) => name !== "");
  if (names.length === 0 || names.some((name) => BROADCAST_NAMES.has(name.toLowerCase()))) return ["all"];
  return names;
}

export function isBroadcast(to: string[]): boolean {
  return to.length === 1 && to[0] === "all";
}

/**
 * Is the message for `agent`? Broadcast or addressed to it, and not its own (an agent is never woken
 * by its own message). Names compare case-insensitively, so `to: Bob` from another tool reaches `bob`.
 */
export function isRelevantTo(message: Pick<ChatMessage, "from" | "to">, agent: string): boolean {
  const me = agent.toLowerCase();
  if (message.from.toLowerCase() === me) return false;
  return isBroadcast(message.to) || message.to.some((name) => name.toLowerCase() === me);
}

/** Read a message file's text. Never throws: a file that cannot be a message gives a problem instead. */
export function parseMessage(
  text: string,
  file: string,
  seqFromName: number,
  channel: string,
): ParsedMessage {
  if (text.includes("\u0000")) return { ok: false, problem: "is not a text file" };
  const parsed = parseFrontmatter(text);
  if (!parsed.ok) return parsed;
  const fields = parsed.fields;
  const from = stripComment(fields.from ?? "");
  if (from === "") return { ok: false, problem: "has no `from` field" };
  const warnings: string[] = [];
  const rawSeq = stripComment(fields.seq ?? "");
  if (rawSeq === "") warnings.push("no `seq` field");
  else if (Number(rawSeq) !== seqFromName)
    warnings.push(`\`seq: ${rawSeq}\` differs from the file name's ${seqFromName}`);
  for (const key of ["channel", "ts", "title"] as const) {
    if (fields[key] === undefined || fields[key] === "") warnings.push(`no \`${key}\` field`);
  }
  const ts = stripComment(fields.ts ?? "");
  if (ts !== "" && !isTimestampWithOffset(ts))
    warnings.push(`\`ts: ${ts}\` is not an ISO-8601 time with offset`);
  const messageChannel = stripComment(fields.channel ?? "");
  if (messageChannel !== "" && messageChannel !== channel)
    warnings.push(`\`channel: ${messageChannel}\` differs from its folder ${channel}`);
  let replyTo: number | undefined;
  const rawReply = stripComment(fields.reply_to ?? "");
  if (rawReply !== "" && rawReply !== "null" && rawReply !== "~") {
    const value = Number(rawReply.replace(/^#/, ""));
    if (Number.isSafeInteger(value) && value > 0) replyTo = value;
    else warnings.push(`\`reply_to: ${rawReply}\` is not a sequence number`);
  }
  const extra: Record<string, string> = {};
  for (const [key, value] of Object.entries(fields)) if (!KNOWN_KEYS.has(key)) extra[key] = value;
  const message: ChatMessage = {
    seq: seqFromName,
    from,
    to: parseRecipients(fields.to),
    ...(replyTo === undefined ? {} : { reply_to: replyTo }),
    channel: messageChannel || channel,
    ts,
    status: stripComment(fields.status ?? "") || DEFAULT_STATUS,
    title: fields.title ?? "",
    body: parsed.body,
    file,
    extra,
    warnings,
  };
  return { ok: true, message };
}

export interface NewMessage {
  seq: number;
  from: string;
  to: string[];
  reply_to?: number;
  channel: string;
  ts?: Date;
  status: string;
  title: string;
  body: string;
  /** More `key: value` lines after the spec's fields (governance: `action`, `veto_until`). */
  extra?: [string, string][];
}

/** The text of a new message file: the spec's fields in the spec's order, then `extra`, then the body. */
export function formatMessage(message: NewMessage): string {
  return formatFrontmatter(
    [
      ["seq", message.seq],
      ["from", message.from],
      ["to", message.to.join(", ")],
      ["reply_to", message.reply_to],
      ["channel", message.channel],
      ["ts", formatTimestamp(message.ts ?? new Date())],
      ["status", message.status],
      ["title", message.title],
      ...(message.extra ?? []),
    ],
    message.body,
  );
}
