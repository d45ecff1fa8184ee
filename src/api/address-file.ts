import { mkdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { projectPaths } from "../engine/store/project.js";
import { writeJsonAtomic } from "../support/atomic-file.js";
import { isProcessAlive } from "../support/process.js";
import * as z from "../support/zod.js";

/** Where a running `caesar serve` says it listens, so `caesar query` finds it without being told. */
export const ADDRESS_FILE = "serve.json";

export const ServeAddressSchema = z.object({
  url: z.string(),
  host: z.string(),
  port: z.number().int().positive(),
  pid: z.number().int().positive(),
  started_at: z.string(),
});
export type ServeAddress = z.infer<typeof ServeAddressSchema>;

export function addressPath(root: string): string {
  return join(projectPaths(root).state, ADDRESS_FILE);
}

export async function writeServeAddress(root: string, address: ServeAddress): Promise<void> {
  await mkdir(projectPaths(root).state, { recursive: true });
  await writeJsonAtomic(addressPath(root), address);
}

/** The address of this workspace's server, if one is recorded and its process still exists. */
export async function readServeAddress(root: string): Promise<ServeAddress | undefined> {
  try {
    const parsed = ServeAddressSchema.safeParse(JSON.parse(await readFile(addressPath(root), "utf8")));
    if (!parsed.success || !isProcessAlive(parsed.data.pid)) return undefined;
    return parsed.data;
  } catch {
    return undefined;
  }
}

/** Remove the address file if it is still this process's (another server may have replaced it). */
export async function removeServeAddress(root: string, pid: number): Promise<void> {
  try {
    const current = ServeAddressSchema.safeParse(JSON.parse(await readFile(addressPath(root), "utf8")));
    if (current.success && current.data.pid === pid) await rm(addressPath(root), { force: true });
  } catch {
    // gone already
  }
}
