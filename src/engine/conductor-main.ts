/**
 * Entry point of a conductor process: `node conductor-main.js <root> <task-id>`. Started detached by a
 * front end; its stdout/stderr go to the task's conductor.log.
 */
import { conduct } from "./conductor.js";

const [root, taskId] = process.argv.slice(2);
if (!root || !taskId) {
  process.stderr.write("usage: conductor-main <root> <task-id>\n");
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
