import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { CONDUCTOR_MAIN } from "../support/package-paths.js";

/** A conductor process started before its task exists, waiting on stdin to be told which task it owns. */
export interface PreparedConductor {
  readonly pid: number | undefined;
  /** Hand it its task: it starts conducting at once. */
  assign(root: string, taskId: string): void;
  /** No task after all (the request was refused): it exits without doing anything. */
  abandon(): void;
}

/**
 * Start a conductor ahead of time, so that loading Node and caesar's code overlaps with planning the task
 * in the front end (every `caesar run` needs two processes: this hides most of the second one's start-up).
 * It is detached from the start; if the front end dies before assigning a task, its stdin closes and it
 * exits.
 */
export function prepareConductor(root: string): PreparedConductor {
  const child: ChildProcess = spawn(process.execPath, [CONDUCTOR_MAIN, "--await-task"], {
    cwd: root,
    detached: true,
    stdio: ["pipe", "ignore", "ignore"],
    env: process.env,
  });
  child.unref();
  child.on("error", () => {});
  child.stdin?.on("error", () => {});
  let done = false;
  return {
    pid: child.pid,
    assign(taskRoot: string, taskId: string) {
      if (done) return;
      done = true;
      child.stdin?.end(`${JSON.stringify({ root: taskRoot, taskId })}\n`);
      (child.stdin as unknown as { unref?: () => void })?.unref?.();
    },
    abandon() {
      if (done) return;
      done = true;
      child.stdin?.end();
    },
  };
}

/** Start a conductor for an existing task, detached, its output in the task's conductor.log. */
export function launchConductor(root: string, taskId: string, logPath: string): number | undefined {
  const log = openSync(logPath, "a");
  try {
    const child = spawn(process.execPath, [CONDUCTOR_MAIN, root, taskId], {
      cwd: root,
      detached: true,
      stdio: ["ignore", log, log],
      env: process.env,
    });
    child.unref();
    child.on("error", () => {});
    return child.pid;
  } finally {
    closeSync(log);
  }
}
