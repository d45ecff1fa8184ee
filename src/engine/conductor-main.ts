/**
 * Entry point of a conductor process, started detached by a front end:
 * - `node conductor-main.js <root> <task-id>`: conduct that task (output: the task's conductor.log);
 * - `node conductor-main.js --await-task`: started ahead of time; reads `{root, taskId}` from stdin, then
 *   conducts it (and exits quietly if stdin closes first: the request was refused).
 */
import { openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { conduct } from "./conductor.js";

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

let root: string | undefined;
let taskId: string | undefined;
if (process.argv[2] === "--await-task") {
  const text = (await readStdin()).trim();
  if (text === "") process.exit(0);
  ({ root, taskId } = JSON.parse(text) as { root: string; taskId: string });
  logTo(join(root!, ".caesar", "tasks", taskId!, "conductor.log"));
} else {
  [root, taskId] = process.argv.slice(2);
}
if (!root || !taskId) {
  process.stderr.write("usage: conductor-main <root> <task-id> | --await-task\n");
  process.exit(2);
}
try {
  await conduct(root, taskId);
} catch (error) {
  process.stderr.write(
    `[caesar conductor] ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
}
// One line for diagnosis and benchmarks: how much memory this conductor needed at its peak.
process.stderr.write(`[caesar conductor] ${taskId} done; max RSS ${process.resourceUsage().maxRSS} KiB\n`);
