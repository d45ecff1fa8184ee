import type { KV } from "@nats-io/kv";
import { liveEntry } from "./cas.js";
import { readClaim } from "./claims.js";
import { decode, WorkerRecordSchema } from "./wire.js";

/**
 * Registry records younger than this many of their refresh periods count as a live worker: the same
 * staleness `caesar cluster status` shows.
 */
const ALIVE_PERIODS = 3;

/**
 * Is the task's claim held by a worker that is still alive — the same process (host and pid) refreshing
 * its record in `caesar-workers` and listing the task as running? The queue redelivers a task when its
 * ack wait passes without a heartbeat, which also happens when the NATS server restarts for longer than
 * that (the holder could not send one). Taking the task over then would run it twice: a redelivery only
 * counts as a lost worker when the registry agrees. A worker really gone stops refreshing its record
 * (or, restarted, lists no such task), so the task is taken over a few registry periods later.
 *
 * The record's age is judged on the server's clock alone: the time the server stored the holder's last
 * refresh against `serverNow`, a time the server stamped just now. Machines' clocks differ; a worker
 * whose clock runs a minute behind is not taken for dead, nor one whose clock runs ahead for alive.
 */
export async function isHolderAlive(
  claims: KV,
  workers: KV,
  taskId: string,
  msgSeq: number,
  serverNow: () => Promise<number>,
): Promise<boolean> {
  const held = await readClaim(claims, taskId);
  if (held?.claim.state !== "running" || held.claim.msg_seq !== msgSeq) return false;
  const entry = await liveEntry(workers, held.claim.worker.id);
  const record = entry && decode(WorkerRecordSchema, entry.value);
  if (!entry || !record) return false;
  const { worker } = held.claim;
  if (record.pid !== worker.pid || record.host !== worker.host || !record.running.includes(taskId))
    return false;
  return (await serverNow()) - entry.created.getTime() < ALIVE_PERIODS * record.heartbeat_ms;
}
