import { readdirSync, readFileSync } from "node:fs";
import { errnoOf } from "./errors.js";

/**
 * The start time of a process, from /proc (clock ticks since boot, as text), so a recorded pid can be told
 * apart from a later process that reused it. `undefined` where /proc is unavailable or the pid is gone.
 */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may contain spaces: split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[19]; // field 22 overall: starttime
  } catch {
    return undefined;
  }
}

export interface RecordedProcess {
  pid: number;
  start?: string | undefined;
}

export function recordProcess(pid: number): RecordedProcess {
  const start = processStartTime(pid);
  return start === undefined ? { pid } : { pid, start };
}

/** Does the process still exist (and is it the same one that was recorded)? */
export function isProcessAlive(record: RecordedProcess | number): boolean {
  const { pid, start } = typeof record === "number" ? { pid: record, start: undefined } : record;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if (errnoOf(error) === "EPERM") return true; // exists, owned by someone else
    return false;
  }
  if (start !== undefined) {
    const now = processStartTime(pid);
    if (now !== undefined && now !== start) return false;
  }
  // A zombie still answers kill(0): count it as gone.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    if (state === "Z" || state === "X") return false;
  } catch {
    // no /proc: trust kill(0)
  }
  return true;
}

/**
 * Is any process of the group still alive? A group of zombies only is not: an orphan the machine's init
 * has not reaped yet (bubblewrap leaves one when its sandbox ends; some container inits reap only now and
 * then) still answers kill(0), and waiting for it would hold every task's end for a second or more.
 */
export function isGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    return errnoOf(error) === "EPERM";
  }
  return hasLiveMember(pgid);
}

/**
 * Whether /proc shows a member of the group that is not a zombie (true where /proc cannot say). The group's
 * leader first: while it runs, no scan of every process (this runs in the service's one event loop).
 */
function hasLiveMember(pgid: number): boolean {
  if (isRunning(String(pgid), pgid)) return true;
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return true;
  }
  return pids.some((pid) => isRunning(pid, pgid));
}

/** Is `pid` a member of group `pgid` that is not a zombie? */
function isRunning(pid: string, pgid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return false; // gone
  }
  // After the command name: state, ppid, pgrp.
  const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(pgrp) === pgid && state !== "Z" && state !== "X";
}

/** Send a signal to a whole process group; false when the group no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}
