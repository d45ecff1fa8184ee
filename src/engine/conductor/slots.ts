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
  // Look first: a taken slot is the common case, and trying to create one writes a temp file.
  let held = await readRecord(path);
  if (held.kind === "missing") {
    if (await createWhole(path, record)) return true;
    held = await readRecord(path);
  }
  if (held.kind === "record") {
    const holder = held.record as SlotFile;
    if (isProcessAlive(holder)) return false;
    await reclaimSlot(path, identityOf(holder), async () => {
      const current = await readRecord(path);
      return current.kind === "record" && sameHolder(current.record as SlotFile, holder);
    });
  } else if (held.kind === "invalid") {
    // Read, but not a record: being written without hard links, or left empty by an older caesar
    // killed while writing it. Taken back once it has stayed so for a while, as the same file.
    const seen = await unreadableFor(path);
    if (seen === undefined) return false;
    await reclaimSlot(path, `unreadable_${seen.ino}`, async () => {
      const now = await unreadableFor(path);
      return now !== undefined && sameFile(now, seen);
    });
  } else {
    // Missing again (released meanwhile), or not readable at all (another user's file, an I/O error):
    // never taken for dead.
    return held.kind === "missing" && createWhole(path, record);
  }
  return createWhole(path, record);
}

/** A slot or claim file that can be read but holds no record. */
const UNREADABLE_AFTER_MS = 60_000;

/** The file at `path`, when it has held no readable record for UNREADABLE_AFTER_MS. */
async function unreadableFor(path: string): Promise<Stats | undefined> {
  let seen: Stats;
  try {
    seen = await stat(path);
  } catch {
    return undefined;
  }
  if (Date.now() - seen.mtimeMs < UNREADABLE_AFTER_MS) return undefined;
  return (await readRecord(path)).kind === "invalid" ? seen : undefined;
}

function sameFile(a: Stats, b: Stats): boolean {
  return a.ino === b.ino && a.dev === b.dev && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;
}

// File systems without hard links answer one of these.
const NO_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EMLINK"]);

/** Temp files live in a folder of their own: writing them does not wake the waiters watching `slots/`. */
const TEMP_DIR = ".tmp";

/**
 * Create `path` holding `record`, unless it exists: written to a temp file, then hard-linked to its
 * name (`link` fails if the name exists). So a slot file is always whole, also when its writer is
 * killed mid-way: an empty one would be a slot no one could take back for a while. Without hard links,
 * the file is created with O_EXCL and written (a kill in between leaves it empty: see unreadableFor).
 */
async function createWhole(path: string, record: object): Promise<boolean> {
  const temps = join(dirname(path), TEMP_DIR);
  await mkdir(temps, { recursive: true });
  const temp = join(temps, `${process.pid}.${randomHex(4)}.tmp`);
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

const TEMP_NAME = /^(\d+)\.[0-9a-f]+\.tmp$/;

/** Temp files of writers killed between writing and linking them (see createWhole). */
async function removeDeadTemps(slotsDir: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(join(slotsDir, TEMP_DIR));
  } catch {
    return;
  }
  for (const name of names) {
    const pid = TEMP_NAME.exec(name)?.[1];
    if (pid !== undefined && !isProcessAlive(Number(pid)))
      await rm(join(slotsDir, TEMP_DIR, name), { force: true });
  }
}

/** A file-name part naming a process: its pid, and its start time where known. */
function identityOf(record: RecordedProcess): string {
  return record.start === undefined ? String(record.pid) : `${record.pid}_${record.start}`;
}

// A reclaimer killed while reclaiming is replaced by another, through a claim named after both: a
// chain as long as the reclaimers killed one after the other at that very point. Past a name this
// long (never seen: each link is ≈ 20 bytes), the slot stays taken until its files are removed.
const MAX_CLAIM_NAME = 240;

/**
 * Remove the slot file of a holder that died — and never a live holder's. Several waiters find the same
 * dead holder; removing "the file at `path`" after a check would remove whatever is there by then,
 * possibly a live holder's that took the slot since (and `max_parallel` would be exceeded). So the
 * reclaimers of one dead holder take turns through a claim named after it (`<slot>.reclaim-<pid>_<start>`,
 * created whole with `link`): its winner checks the slot again (`stillDead`) and removes it only if it is
 * still that holder's. No one else removes a dead holder's file, and a dead process never takes a slot
 * again, so the file checked is the file removed. A claim whose winner died is taken over through a
 * claim named after both (`…-<pid>_<start>.<its pid>_<start>`), by one process again; so is a claim
 * left unreadable for a minute (a winner killed mid-write without hard links).
 */
async function reclaimSlot(
  path: string,
  deadName: string,
  stillDead: () => Promise<boolean>,
  chain: string[] = [],
): Promise<void> {
  const names = [deadName, ...chain];
  const claim = `${path}.reclaim-${names.join(".")}`;
  if (basename(claim).length > MAX_CLAIM_NAME) return;
  if (!(await createWhole(claim, recordProcess(process.pid)))) {
    const owner = await readRecord(claim);
    if (owner.kind === "record") {
      if (isProcessAlive(owner.record)) return;
      return reclaimSlot(path, deadName, stillDead, [...chain, identityOf(owner.record)]);
    }
    const unreadable = owner.kind === "invalid" ? await unreadableFor(claim) : undefined;
    if (unreadable === undefined) return;
    return reclaimSlot(path, deadName, stillDead, [...chain, `unreadable_${unreadable.ino}`]);
  }
  // Only when the check itself succeeded are the claims removed: a failed read leaves them, and the
  // dead holder's file, for a later try through the same chain.
  if (!(await stillDead())) {
    if ((await readRecord(path)).kind === "error") return;
  } else await rm(path, { force: true });
  // This claim and those of the dead reclaimers before it: their dead holder's file is gone.
  for (let length = names.length; length >= 1; length--)
    await rm(`${path}.reclaim-${names.slice(0, length).join(".")}`, { force: true });
}

function sameHolder(a: SlotFile, b: SlotFile): boolean {
  return a.pid === b.pid && a.start === b.start && a.task_id === b.task_id && a.since === b.since;
}

type ReadRecord =
  | { kind: "record"; record: RecordedProcess }
  | { kind: "missing" }
  /** Read, but no record in it (empty, half-written, not JSON). */
  | { kind: "invalid" }
  /** Could not be read (permissions, I/O): nothing can be concluded. */
  | { kind: "error" };

async function readRecord(path: string): Promise<ReadRecord> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    return errnoOf(error) === "ENOENT" ? { kind: "missing" } : { kind: "error" };
  }
  try {
    const record = JSON.parse(text) as RecordedProcess;
    if (typeof record === "object" && record !== null && Number.isSafeInteger(record.pid))
      return { kind: "record", record };
  } catch {
    // not JSON
  }
  return { kind: "invalid" };
}

async function readSlot(path: string): Promise<SlotFile | undefined> {
  const read = await readRecord(path);
  return read.kind === "record" ? (read.record as SlotFile) : undefined;
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
