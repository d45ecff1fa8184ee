import { readFileSync } from "node:fs";
import { errnoOf, messageOf } from "./errors.js";

/** A process above this one that was started as a task's agent (its initial environment names the task). */
export interface TaskAncestor {
  pid: number;
  taskId: string;
  taskDir: string | undefined;
}

const MAX_STEPS = 64;

/**
 * The walk could not be completed: more than MAX_STEPS ancestors, or a /proc entry of the chain that cannot
 * be read. Not "no task": a proof that runs out refuses (the caller turns this into `ancestry_unproven`).
 */
export class AncestryUnprovenError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = "AncestryUnprovenError";
  }
}

/**
 * The nearest ancestor of this process whose **initial** environment (`/proc/<pid>/environ`, what it was
 * started with — unsetting a variable later does not change it) carries `CAESAR_TASK_ID`: the agent
 * process of the task this process runs under, or a shell it started. Linux only (elsewhere: undefined).
 * Undefined only when the walk reached init; a walk that cannot finish throws AncestryUnprovenError.
 *
 * Best effort, and said so in docs/threat-model.md: a process that detaches itself (double fork, setsid)
 * is re-parented to init and leaves no such ancestor, and an `exec` with a new environment replaces what
 * /proc shows; processes of other users are skipped.
 */
export function findTaskAncestor(from: number = process.ppid): TaskAncestor | undefined {
  if (process.platform !== "linux") return undefined;
  let pid = from;
  for (let step = 0; step < MAX_STEPS; step++) {
    if (pid <= 1) return undefined;
    const found = taskOfEnviron(pid);
    if (found) return found;
    const parent = parentOf(pid);
    if (parent === pid) return undefined;
    pid = parent;
  }
  if (pid <= 1) return undefined;
  throw new AncestryUnprovenError(
    `this process has more than ${MAX_STEPS} ancestors, so caesar cannot tell whether one is a task's agent`,
  );
}

function taskOfEnviron(pid: number): TaskAncestor | undefined {
  let environ: Buffer;
  try {
    environ = readFileSync(`/proc/${pid}/environ`);
  } catch (error) {
    // Another user's process (a sudo, a login): not an agent of this user's tasks.
    if (errnoOf(error) === "EACCES" || errnoOf(error) === "EPERM") return undefined;
    throw new AncestryUnprovenError(
      `/proc/${pid}/environ, of an ancestor of this process, cannot be read (${errnoOf(error) ?? messageOf(error)})`,
    );
  }
  if (environ.indexOf("CAESAR_TASK_ID=") === -1) return undefined;
  let taskId: string | undefined;
  let taskDir: string | undefined;
  for (const entry of environ.toString("utf8").split("\0")) {
    if (entry.startsWith("CAESAR_TASK_ID=")) taskId = entry.slice("CAESAR_TASK_ID=".length);
    else if (entry.startsWith("CAESAR_TASK_DIR=")) taskDir = entry.slice("CAESAR_TASK_DIR=".length);
  }
  return taskId ? { pid, taskId, taskDir } : undefined;
}

function parentOf(pid: number): number {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch (error) {
    throw new AncestryUnprovenError(
      `/proc/${pid}/stat, of an ancestor of this process, cannot be read (${errnoOf(error) ?? messageOf(error)})`,
    );
  }
  // The command name (field 2) is in parentheses and may contain spaces: split after the last ')'.
  const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  if (!Number.isInteger(ppid)) throw new AncestryUnprovenError(`/proc/${pid}/stat has no parent pid`);
  return ppid;
}
