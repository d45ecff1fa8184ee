/**
 * What a conductor process does, from its command line (`argv[2]` on):
 * - `<root> <task-id>`: conduct that task (output: the task's conductor.log);
 * - `--await-task`: started ahead of time; reads `{root, taskId}` from stdin, then conducts it (and exits
 *   quietly if stdin closes first: the request was refused).
 * Its entry point: ../conductor-main.ts (built to dist/engine/conductor.js).
 */
import { openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { trace, traceLine } from "../../support/trace.js";
import { taskDirOf } from "../store/task-store.js";
import { type ConductorHooks, conduct } from "./conductor.js";

async function readStdin(): Promise<string> {
  let text = "";
  for await (const chunk of process.stdin) text += chunk;
  return text;
}

/** Send this process's own diagnostics to the task's conductor.log (prepared conductors start without). */
function logTo(path: string): void {
  const fd = openSync(path, "a");
  const write = (chunk: unknown) => {
    writeSync(fd, typeof chunk === "string" ? chunk : String(chunk));
    return true;
  };
  process.stdout.write = write as typeof process.stdout.write;
  process.stderr.write = write as typeof process.stderr.write;
}

export async function runConductorProcess(
  argv: readonly string[],
  hooks: ConductorHooks = {},
): Promise<void> {
  let root: string | undefined;
  let taskId: string | undefined;
  if (argv[2] === "--await-task") {
    // Its output goes nowhere until it knows its task: keep these two lines for the task's log.
    const loaded = traceLine("conductor: loaded, waiting for its task");
    const text = (await readStdin()).trim();
    const assigned = traceLine("conductor: assigned");
    if (text === "") return process.exit(0);
    ({ root, taskId } = JSON.parse(text) as { root: string; taskId: string });
    // Started ahead of time from wherever the front end ran: work from the project's root from now on.
    try {
      process.chdir(root);
    } catch {
      // gone already: conducting fails below and says so in the task's files
    }
    logTo(join(taskDirOf(root, taskId), "conductor.log"));
    if (loaded && assigned) process.stderr.write(loaded + assigned);
  } else {
    [root, taskId] = argv.slice(2);
  }
  trace("conductor: started");
  if (!root || !taskId) {
    process.stderr.write("usage: conductor <root> <task-id> | --await-task\n");
    return process.exit(2);
  }
  // This process is the task's: its signals cancel it (caesar cancel sends SIGTERM).
  const cancel = new AbortController();
  const onSignal = () => cancel.abort();
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, onSignal);
  try {
    await conduct(root, taskId, {
      ...hooks,
      signal: cancel.signal,
      env: process.env,
      log: (line) => process.stderr.write(`${line}\n`),
    });
  } catch (error) {
    process.stderr.write(
      `[caesar conductor] ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  }
  // One line for diagnosis and benchmarks: how much memory this conductor needed at its peak, and CPU time.
  const usage = process.resourceUsage();
  const cpuMs = Math.round((usage.userCPUTime + usage.systemCPUTime) / 1000);
  process.stderr.write(`[caesar conductor] ${taskId} done; max RSS ${usage.maxRSS} KiB, CPU ${cpuMs} ms\n`);
}
