import { existsSync, statSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { isProcessAlive } from "../support/process.js";
import * as z from "../support/zod.js";
import {
  ensurePrivateDir,
  existingPrivateDir,
  listPrivateDir,
  readPrivateFile,
  writePrivateFile,
} from "./security/private-dir.js";

/**
 * Where each running `caesar serve` says it listens, so `caesar query` and `caesar serve login` find it
 * without being told: one file per server, `.caesar/state/serve/server-<runId>.json`, in the private
 * directory (so no other user can plant an address there). Several servers of one workspace never share
 * or overwrite a file; each removes only its own; a file whose process is gone is stale and removed by
 * whoever lists the servers next.
 */
export const ServeAddressSchema = z.object({
  url: z.string(),
  host: z.string(),
  port: z.number().int().positive(),
  pid: z.number().int().positive(),
  /** The process's start time (from /proc), so a later process that reuses the pid is not taken for it. */
  start: z.string().optional(),
  runId: z.string().regex(/^[0-9a-f-]{36}$/),
  started_at: z.string(),
  /** Which token the server accepts: the workspace's file, or one given to --token. */
  token: z.enum(["file", "option"]),
});
export type ServeAddress = z.infer<typeof ServeAddressSchema>;

const PREFIX = "server-";
const SUFFIX = ".json";

function fileName(runId: string): string {
  return `${PREFIX}${runId}${SUFFIX}`;
}

/** Record a server's address; its name is its runId, so it can never replace another server's file. */
export async function writeServeAddress(root: string, address: ServeAddress): Promise<void> {
  const dir = await ensurePrivateDir(root);
  await writePrivateFile(dir, fileName(address.runId), `${JSON.stringify(address, null, 2)}\n`, {
    exclusive: true,
  });
}

/** Remove this server's own address file, and nobody else's. */
export async function removeServeAddress(root: string, runId: string): Promise<void> {
  const dir = await existingPrivateDir(root).catch(() => undefined);
  if (dir) await rm(join(dir, fileName(runId)), { force: true });
}

/**
 * The servers of this workspace whose process still runs, oldest first. Files of servers that are gone
 * (killed with -9, a crash) are removed on the way; unreadable or malformed files are skipped.
 */
export async function listServeAddresses(root: string): Promise<ServeAddress[]> {
  const listing = await listPrivateDir(root);
  if (!listing) return [];
  const live: ServeAddress[] = [];
  for (const name of listing.names) {
    if (!name.startsWith(PREFIX) || !name.endsWith(SUFFIX)) continue;
    const path = join(listing.dir, name);
    const address = await readAddress(path);
    if (!address) continue;
    if (
      isProcessAlive(
        address.start === undefined ? address.pid : { pid: address.pid, start: address.start },
      ) &&
      isOwnProcess(address.pid)
    ) {
      live.push(address);
    } else {
      await rm(path, { force: true });
    }
  }
  return live.sort((a, b) => a.started_at.localeCompare(b.started_at));
}

/** Is the process this user's? (/proc says; where there is none, the private directory alone vouches.) */
function isOwnProcess(pid: number): boolean {
  if (typeof process.getuid !== "function" || !existsSync("/proc/self")) return true;
  try {
    return statSync(`/proc/${pid}`).uid === process.getuid();
  } catch {
    return false;
  }
}

async function readAddress(path: string): Promise<ServeAddress | undefined> {
  try {
    const text = await readPrivateFile(path);
    if (text === undefined) return undefined;
    const parsed = ServeAddressSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    // Gone meanwhile, not JSON, or not a private file (a link, another owner): not an address to use.
    return undefined;
  }
}
