import { formatTimestamp, isTimestampWithOffset } from "./clock.js";
import { formatFrontmatter, parseFrontmatter, stripComment, unquoteName } from "./frontmatter.js";

/** One message as caesar hands it out: the frontmatter fields, the body, and where it came from. */
export interface ChatMessage {
  seq: number;
  /** The sender as written (empty, with a warning, when the file has no `from`). */
  from: string;
  /** Recipients as written; `["all"]` for a broadcast (`to` absent, empty, `all`, `*` or `[]`). */
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
const BROADCAST_VALUES = new Set(["", "all", "*", "[]"]);

/**
 * `to` as a list, read as the reference reads it: empty, `all`, `*` or `[]` is a broadcast; otherwise
 * the names between commas (a YAML flow list's brackets dropped). A trailing comment is dropped, and
 * a quoted name unquoted (older caesar versions quoted `yes`, `no`, `on`…).
 */
export function parseRecipients(raw: string | undefined): string[] {
  const value = unquoteName(stripComment(raw ?? ""));
  if (BROADCAST_VALUES.has(value)) return ["all"];
  const names = value
    .replace(/^\[+|\]+$/g, "")
    .split(",")
    .map((name) => unquoteName(name.trim()))
    .filter((name) => name !== "");
  return names.length === 0 ? ["all"] : names;
}

export function isBroadcast(to: string[]): boolean {
  return to.length === 1 && to[0] === "all";
}

/**
 * Is the message for `agent`? Broadcast or addressed to it, and not its own (an agent is never woken
 * by its own message). Names compare exactly, as in the reference implementation, so that both tools
 * deliver the same messages to the same agent.
 */
export function isRelevantTo(message: Pick<ChatMessage, "from" | "to">, agent: string): boolean {
  if (message.from === agent) return false;
  return isBroadcast(message.to) || message.to.includes(agent);
}

/**
 * Read a message file's text. Never throws: a file that cannot be a message gives a problem instead.
 * Anything with a frontmatter block is delivered (as the reference does); missing or odd fields
 * become warnings.
 */
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
  const from = unquoteName(stripComment(fields.from ?? ""));
  const warnings: string[] = [];
  if (from === "") warnings.push("no `from` field");
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
