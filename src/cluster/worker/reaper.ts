import type { KV } from "@nats-io/kv";
import { liveEntry } from "../cas.js";
import { isHeldBy, readClaim } from "../claims.js";
import { decode, WorkerRecordSchema } from "../wire.js";

/**
 * Registry periods a lost worker's record stays after it went silent, so that `cluster status` shows it
 * as lost for a while: a minute with the 5 s period.
 */
const REAP_AFTER_PERIODS = 12;

/**
 * Remove the registry records of workers gone for good: silent for `REAP_AFTER_PERIODS` by the server's
 * clock (`serverNow`), and holding no claim any more (a task still claimed by a lost worker is waiting
 * for another to take it over: its record says where it was). Without this a killed worker stays in the
 * registry for the bucket's 24 h TTL.
 */
export async function reapLostWorkers(
  workers: KV,
  claims: KV,
  serverNow: () => Promise<number>,
  log: (line: string) => void,
): Promise<void> {
  const now = await serverNow();
  const keys: string[] = [];
  for await (const key of await workers.keys()) keys.push(key);
  for (const key of keys) {
    const entry = await liveEntry(workers, key);
    const record = entry && decode(WorkerRecordSchema, entry.value);
    if (!entry || !record) continue;
    if (now - entry.created.getTime() <= REAP_AFTER_PERIODS * record.heartbeat_ms) continue;
    let holds = false;
    for (const id of record.running) {
      const claim = (await readClaim(claims, id))?.claim;
      if (isHeldBy(claim, record)) holds = true;
    }
    if (holds) continue;
    // Only the revision read: a worker that came back meanwhile rewrote its record, and keeps it.
    await workers.delete(key, { previousSeq: entry.revision }).catch(() => undefined);
    log(`[worker] removed the record of worker ${record.id}: silent since ${record.heartbeat_at}`);
  }
}
