import type { KV } from "@nats-io/kv";

/**
 * The NATS server's time now, as it stamps what it stores: write `value` under `key` and read back when
 * the server stored it. (A later write of the same key is as good: it is later still.)
 */
export async function serverTimeOf(kv: KV, key: string, value: string): Promise<number> {
  const revision = await kv.put(key, value);
  const entry = (await kv.get(key, { revision })) ?? (await kv.get(key));
  if (!entry) throw new Error(`${key} was deleted as it was written`);
  return entry.created.getTime();
}
