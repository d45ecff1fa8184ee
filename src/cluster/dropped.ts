import type { JsMsg } from "@nats-io/jetstream";
import type { KV } from "@nats-io/kv";
import { liveEntry } from "./cas.js";
import { type DroppedMessage, DroppedMessageSchema, decode, encode, TaskMessageSchema } from "./wire.js";

/** The first bytes of a dropped message kept for a look, and how many records `cluster status` lists. */
const PREVIEW_CHARS = 200;
const LISTED = 50;

/**
 * Record a queue message a worker dropped or refused, for `caesar cluster status`: an operator sees what
 * was published that no worker ran, and why. Best effort: a record that cannot be written is logged only.
 */
export async function recordDropped(
  bucket: KV,
  msg: Pick<JsMsg, "seq" | "subject" | "data">,
  what: { worker: string; taskId: string | null; action: DroppedMessage["action"]; reason: string },
): Promise<void> {
  const text = new TextDecoder("utf-8", { fatal: false }).decode(msg.data.subarray(0, PREVIEW_CHARS * 4));
  const record: DroppedMessage = {
    seq: msg.seq,
    subject: msg.subject,
    at: new Date().toISOString(),
    worker: what.worker,
    task_id: what.taskId,
    action: what.action,
    reason: printable(what.reason).slice(0, 1000),
    bytes: msg.data.length,
    preview: printable(text).slice(0, PREVIEW_CHARS),
  };
  await bucket.put(String(msg.seq), encode(record));
}

/** Control characters out: a terminal shows what came from the network as text, never as escape sequences. */
function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, " ");
}

/** The latest dropped or refused messages, newest first. */
export async function readDropped(bucket: KV): Promise<DroppedMessage[]> {
  const keys: string[] = [];
  for await (const key of await bucket.keys()) if (/^\d+$/.test(key)) keys.push(key);
  const latest = keys.sort((a, b) => Number(b) - Number(a)).slice(0, LISTED);
  const records: DroppedMessage[] = [];
  for (const key of latest) {
    const entry = await liveEntry(bucket, key);
    const record = entry && decode(DroppedMessageSchema, entry.value);
    if (record) records.push(record);
  }
  return records;
}

/** Why bytes from the queue are not a task message: not JSON, or the first thing the schema refuses. */
export function whyInvalid(data: Uint8Array): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(data));
  } catch {
    return "not JSON";
  }
  const result = TaskMessageSchema.safeParse(parsed);
  if (result.success) return "a valid task message";
  const issue = result.error.issues[0];
  return `not a caesar.cluster.task/v1 task message (${issue ? `${issue.path.join(".") || "the message"}: ${issue.message}` : "invalid"})`;
}
