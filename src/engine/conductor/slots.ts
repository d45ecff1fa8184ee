import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { errnoOf } from "../../support/errors.js";
import { isProcessAlive, type RecordedProcess, recordProcess } from "../../support/process.js";
import { randomHex } from "../../support/random.js";
import { waitForChange } from "../store/change-watch.js";

export interface SlotHolder {
  task_id: string;
  pid: number;
  since: string;
}

interface SlotFile extends RecordedProcess, SlotHolder {}

/**
 * A sub-task's way into its parent's slot: every running task keeps room in its slot for **one**
 * sub-task at a time (as make's jobserver gives each sub-make one implicit token). A task waiting on its
 * descendants therefore never keeps them from running: a chain deeper than `max_parallel` runs, each level
 * in its parent's slot, and a fan-out's first child runs at once while the others queue for free slots.
 */
export interface SlotLending {
  parentId: string;
  /** Does the parent still run (and so still hold the slot it lends)? */
  parentRuns: () => Promise<boolean>;
}

/**
 * Slots cap the tasks running at once across every process of a project (`[policy] max_parallel`).
 * Slot `i` is the file `<slots>/<i>.json`, created with O_EXCL by the conductor that holds it; a slot
 * whose holder died (its recorded pid is gone) is reclaimed. A sub-task first tries its parent's lent
 * place, `<slots>/lent-<parent>.json` (same rules), then the numbered slots.
 */
export async function acquireSlot(
  slotsDir: string,
  taskId: string,
  max: number,
  onWait: (holders: SlotHolder[]) => void | Promise<void>,
  signal?: AbortSignal,
  lending?: SlotLending,
): Promise<() => Promise<void>> {
  await mkdir(slotsDir, { recursive: true });
  let lastHolders = "";
  for (;;) {
    if (signal?.aborted) throw signal.reason ?? new Error("aborted");
    if (lending && (await lending.parentRuns())) {
      const path = join(slotsDir, `lent-${lending.parentId}.json`);
      if (await tryTake(path, taskId)) {
        return async () => {
          await releaseIfOurs(path, taskId);
        };
      }
    }
    for (let index = 0; index < max; index++) {
      const path = join(slotsDir, `${index}.json`);
      if (await tryTake(path, taskId)) {
        return async () => {
          await releaseIfOurs(path, taskId);
        };
      }
    }
    const holders = await readHolders(slotsDir);
    const key = holders.map((h) => h.task_id).join(",");
    if (key !== lastHolders) {
      lastHolders = key;
      await onWait(holders);
    }
    await waitForChange(slotsDir, 2000, signal);
  }
}

async function tryTake(path: string, taskId: string): Promise<boolean> {
  const record: SlotFile = {
    ...recordProcess(process.pid),
    task_id: taskId,
    since: new Date().toISOString(),
  };
  try {
    const handle = await open(path, "wx");
    await handle.writeFile(JSON.stringify(record));
    await handle.close();
    return true;
  } catch (error) {
    if (errnoOf(error) !== "EEXIST") throw error;
  }
  const holder = await readSlot(path);
  if (holder === undefined || isProcessAlive(holder)) return false;
  // The holder died: move its file aside (only one reclaimer wins the rename), then retry the O_EXCL create.
  const aside = `${path}.stale-${process.pid}-${randomHex(3)}`;
  try {
    await rename(path, aside);
  } catch {
    return false;
  }
  const moved = await readSlot(aside);
  await rm(aside, { force: true });
  if (moved && isProcessAlive(moved)) {
    // We moved a live holder's file (it re-took the slot between our read and rename): give it back.
    try {
      const handle = await open(path, "wx");
      await handle.writeFile(JSON.stringify(moved));
      await handle.close();
    } catch {
      // someone took it meanwhile; the live holder keeps running regardless
    }
    return false;
  }
  return tryTake(path, taskId);
}

async function readSlot(path: string): Promise<SlotFile | undefined> {
  try {
    return JSON.parse(await readFile(path, "utf8")) as SlotFile;
  } catch {
    return undefined;
  }
}

async function releaseIfOurs(path: string, taskId: string): Promise<void> {
  const holder = await readSlot(path);
  if (holder?.task_id === taskId && holder.pid === process.pid) await rm(path, { force: true });
}

/** The live holders of every slot (any index, so a lowered max_parallel still shows who runs). */
export async function readHolders(slotsDir: string): Promise<SlotHolder[]> {
  let names: string[];
  try {
    names = await readdir(slotsDir);
  } catch {
    return [];
  }
  const holders: SlotHolder[] = [];
  for (const name of names.filter((n) => /^\d+\.json$/.test(n)).sort()) {
    const holder = await readSlot(join(slotsDir, name));
    if (holder && isProcessAlive(holder))
      holders.push({ task_id: holder.task_id, pid: holder.pid, since: holder.since });
  }
  return holders;
}
