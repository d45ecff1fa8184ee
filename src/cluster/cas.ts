import type { KV, KvEntry } from "@nats-io/kv";
import { CaesarError, messageOf } from "../support/errors.js";

/** Was this error the server refusing a compare-and-set (the entry changed since it was read)? */
export function isCasConflict(error: unknown): boolean {
  const code = (error as { api_error?: { err_code?: number }; code?: unknown })?.api_error?.err_code;
  return code === 10071 || /wrong last sequence|key exists/i.test(messageOf(error));
}

/** The live entry of a key (a deleted or purged one counts as absent). */
export async function liveEntry(kv: KV, key: string): Promise<KvEntry | undefined> {
  const entry = await kv.get(key);
  return entry && entry.operation === "PUT" ? entry : undefined;
}

/**
 * Read-modify-write one KV entry with compare-and-set, retrying when another writer got there first.
 * `change` gets the current entry (undefined when absent) and returns the new value, or undefined to
 * leave it; it may throw to refuse (nothing is written). Resolves with the revision written (or the
 * current one when nothing was).
 */
export async function updateWithCas(
  kv: KV,
  key: string,
  change: (current: KvEntry | undefined) => string | undefined,
): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const current = await kv.get(key);
    const live = current && current.operation === "PUT" ? current : undefined;
    const next = change(live);
    if (next === undefined) return current?.revision ?? 0;
    try {
      // A deleted entry's revision is still the one to compare with; a key never written has none.
      if (current) return await kv.update(key, next, current.revision);
      return await kv.create(key, next);
    } catch (error) {
      if (!isCasConflict(error)) throw error;
    }
  }
  throw new CaesarError("cas_contention", `Could not update ${key}: too many concurrent writers.`, {
    detail: "Retry in a moment.",
  });
}
