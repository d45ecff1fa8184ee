import { readFileSync } from "node:fs";

/** A process above this one that was started as a task's agent (its initial environment names the task). */
export interface TaskAncestor {
  pid: number;
  taskId: string;
  taskDir: string | undefined;
}

const MAX_STEPS = 64;

/**
 * The nearest ancestor of this process whose **initial** environment (`/proc/<pid>/environ`, what it was
 * started with — unsetting a variable later does not change it) carries `CAESAR_TASK_ID`: the agent
 * process of the task this process runs under, or a shell it started. Linux only (elsewhere: undefined).
 *
 * Best effort, and said so in docs/threat-model.md: a process that detaches itself (double fork, setsid)
 * is re-parented to init and leaves no such ancestor; processes of other users are skipped.
 */
export function findTaskAncestor(from: number = process.ppid): TaskAncestor | undefined {
  if (process.platform !== "linux") return undefined;
  let pid = from;
  for (let step = 0; step < MAX_STEPS && pid > 1; step++) {
    const found = taskOfEnviron(pid);
    if (found) return found;
    const parent = parentOf(pid);
    if (parent === undefined || parent === pid) return undefined;
    pid = parent;
  }
  return undefined;
}

function taskOfEnviron(pid: number): TaskAncestor | undefined {
  let environ: Buffer;
  try {
    environ = readFileSync(`/proc/${pid}/environ`);
  } catch {
    return undefined;
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

function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may contain spaces: split after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    return Number.isInteger(ppid) ? ppid : undefined;
  } catch {
    return undefined;
  }
}
