import { readFileSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { writeJsonAtomic } from "../../support/atomic-file.js";
import { makePrivateDir } from "../../support/private-dir.js";
import { isProcessAlive, recordProcess } from "../../support/process.js";
import * as z from "../../support/zod.js";
import { controlPaths } from "../store/control.js";

/**
 * A cluster worker conducting tasks in this clone says so in the control directory: `workers/<pid>.json`
 * (its pid and start time), for as long as it runs. A command a sandboxed task's broker starts on that
 * worker believes the task it is named for only when its parent is such a worker (broker-files.ts), as
 * on a machine it believes the project's conductor service, and that parent conducts the task
 * (lifecycle/caller.ts). No sandboxed agent can write the record: the control directory is read-only in
 * every sandbox. An unsandboxed one can (it writes what the user can), so a record alone proves nothing
 * about a task: one it wrote for itself names no task it conducts.
 */
const WorkerRecordSchema = z.object({ pid: z.number().int().positive(), start: z.string().optional() });

function recordPath(root: string, pid: number): string {
  return join(controlPaths(root).dir, "workers", `${pid}.json`);
}

/**
 * Record this process as a worker of the clone; the returned function removes the record. The records of
 * workers that are gone without removing theirs (`kill -9`) go first: they proved nothing, and no longer pile up.
 */
export async function recordWorker(root: string): Promise<() => Promise<void>> {
  const path = recordPath(root, process.pid);
  const folder = join(controlPaths(root).dir, "workers");
  await makePrivateDir(folder);
  for (const name of await readdir(folder).catch(() => [] as string[])) {
    const pid = /^(\d+)\.json$/.exec(name)?.[1];
    if (pid !== undefined && Number(pid) !== process.pid && !isWorkerOf(root, Number(pid)))
      await rm(join(folder, name), { force: true });
  }
  await writeJsonAtomic(path, recordProcess(process.pid));
  return () => rm(path, { force: true });
}

/** Is `pid` a live cluster worker of this clone (the same process its record names)? */
export function isWorkerOf(root: string, pid: number): boolean {
  try {
    const parsed = WorkerRecordSchema.safeParse(JSON.parse(readFileSync(recordPath(root, pid), "utf8")));
    return parsed.success && parsed.data.pid === pid && isProcessAlive(parsed.data);
  } catch {
    return false;
  }
}
