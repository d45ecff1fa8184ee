import type { Stats } from "node:fs";
import { link, mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
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
 * Slot `i` is the file `<slots>/<i>.json`, created whole (see createWhole) by the conductor that holds
 * it and removed by it when it lets go; a slot whose holder died (its recorded process is gone) is
 * reclaimed (see reclaimSlot). A sub-task first tries its parent's lent place, `<slots>/lent-<parent>.json`
 * (same rules), then the numbered slots.
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
  // Told on the first wait (even when no live holder can be named: an unreadable slot file), then on
  // each change of holders.
  let lastHolders: string | undefined;
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
    await removeDeadTemps(slotsDir);
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
  if (await createWhole(path, record)) return true;
  const holder = await readSlot(path);
  if (holder !== undefined) {
    if (isProcessAlive(holder)) return false;
    await reclaimSlot(path, identityOf(holder), async () => {
      const current = await readSlot(path);
      return current !== undefined && sameHolder(current, holder);
    });
  } else {
    // Unreadable: being written without hard links, or left empty by an older caesar killed while
    // writing it. Taken back once it has stayed so for a while, as the same file (inode).
    const seen = await statOrUndefined(path);
    if (seen === undefined || Date.now() - seen.mtimeMs < UNREADABLE_AFTER_MS) return false;
    await reclaimSlot(path, `unreadable_${seen.ino}`, async () => {
      const current = await statOrUndefined(path);
      return current?.ino === seen.ino && (await readSlot(path)) === undefined;
    });
  }
  return createWhole(path, record);
}

const UNREADABLE_AFTER_MS = 60_000;

async function statOrUndefined(path: string): Promise<Stats | undefined> {
  try {
    return await stat(path);
  } catch {
    return undefined;
  }
}

// File systems without hard links answer one of these.
const NO_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EMLINK"]);

/**
 * Create `path` holding `record`, unless it exists: written to a temp file beside it, then hard-linked
 * to its name (`link` fails if the name exists). So a slot file is always whole, also when its writer
 * is killed mid-way: an empty one would be a slot no one could ever take back. Without hard links, the
 * file is created with O_EXCL and written (a kill in between leaves an empty file).
 */
async function createWhole(path: string, record: object): Promise<boolean> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomHex(4)}.tmp`);
  await writeFile(temp, JSON.stringify(record), { flag: "wx" });
  try {
    await link(temp, path);
    return true;
  } catch (error) {
    const code = errnoOf(error);
    if (code === "EEXIST") return false;
    if (code === undefined || !NO_LINKS.has(code)) throw error;
  } finally {
    await rm(temp, { force: true });
  }
  try {
    await writeFile(path, JSON.stringify(record), { flag: "wx" });
    return true;
  } catch (error) {
    if (errnoOf(error) === "EEXIST") return false;
    throw error;
  }
}

const TEMP_NAME = /^\..+\.(\d+)\.[0-9a-f]+\.tmp$/;

/** Temp files of writers killed between writing and linking them (see createWhole). */
async function removeDeadTemps(slotsDir: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(slotsDir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = TEMP_NAME.exec(name)?.[1];
    if (pid !== undefined && !isProcessAlive(Number(pid))) await rm(join(slotsDir, name), { force: true });
  }
}

/** A file-name part naming a process: its pid, and its start time where known. */
function identityOf(record: RecordedProcess): string {
  return record.start === undefined ? String(record.pid) : `${record.pid}_${record.start}`;
}

// A reclaimer killed while reclaiming is replaced by another, through a claim named after both: a chain
// as long as the reclaimers killed one after the other at that very point. Eight keeps every claim's
// name under 255 bytes; past it (never seen), the slot stays taken until its files are removed.
const MAX_RECLAIM_CHAIN = 8;

/**
 * Remove the slot file of a holder that died — and never a live holder's. Several waiters find the same
 * dead holder; removing "the file at `path`" after a check would remove whatever is there by then,
 * possibly a live holder's that took the slot since (and `max_parallel` would be exceeded). So the
 * reclaimers of one dead holder take turns through a claim named after it (`<slot>.reclaim-<pid>_<start>`,
 * created whole with `link`): its winner checks the slot again (`stillDead`) and removes it only if it is
 * still that holder's. No one else removes a dead holder's file, and a dead process never takes a slot
 * again, so the file checked is the file removed. A claim whose winner died is taken over through a
 * claim named after both (`…-<pid>_<start>.<its pid>_<start>`), by one process again.
 */
async function reclaimSlot(
  path: string,
  deadName: string,
  stillDead: () => Promise<boolean>,
  chain: RecordedProcess[] = [],
): Promise<void> {
  const names = [deadName, ...chain.map(identityOf)];
  const claim = `${path}.reclaim-${names.join(".")}`;
  if (!(await createWhole(claim, recordProcess(process.pid)))) {
    const owner = await readRecord(claim);
    if (owner === undefined || isProcessAlive(owner) || chain.length >= MAX_RECLAIM_CHAIN) return;
    return reclaimSlot(path, deadName, stillDead, [...chain, owner]);
  }
  if (await stillDead()) await rm(path, { force: true });
  // This claim and those of the dead reclaimers before it: their dead holder's file is gone.
  for (let length = names.length; length >= 1; length--)
    await rm(`${path}.reclaim-${names.slice(0, length).join(".")}`, { force: true });
}

function sameHolder(a: SlotFile, b: SlotFile): boolean {
  return a.pid === b.pid && a.start === b.start && a.task_id === b.task_id && a.since === b.since;
}

async function readRecord(path: string): Promise<RecordedProcess | undefined> {
  try {
    const record = JSON.parse(await readFile(path, "utf8")) as RecordedProcess;
    return Number.isSafeInteger(record.pid) ? record : undefined;
  } catch {
    return undefined;
  }
}

async function readSlot(path: string): Promise<SlotFile | undefined> {
  return (await readRecord(path)) as SlotFile | undefined;
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
