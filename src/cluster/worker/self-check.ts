import { statfs } from "node:fs/promises";
import { CaesarError } from "../../support/errors.js";
import { git } from "../../workspace/git.js";

/** Free space a worker's clone needs to take tasks (worktrees, fetched objects, task files). */
const MIN_FREE_BYTES = 512 * 1024 * 1024;

/** Where the write check pushes: outside branches and tags, removed again at once. */
function probeRef(workerId: string): string {
  return `refs/caesar/probe/${workerId}`;
}

/**
 * What a worker checks before it takes any task: that it can fetch from and push to its git remote (a
 * task's starting point comes from there and its result goes there), and that its clone's disk has room.
 * Its agents were checked when they were chosen (known, allowed, installed). A worker that fails refuses
 * to start, saying what failed and what to do — rather than take tasks and fail each of them.
 */
export async function checkWorkerHealth(top: string, remote: string, workerId: string): Promise<void> {
  const problems: string[] = [];
  const read = await git(top, ["ls-remote", "--quiet", remote, "refs/heads/caesar-probe-none"], {
    allowFailure: true,
  });
  if (read.code !== 0) {
    problems.push(
      `cannot fetch from the git remote ${remote}: ${lastLine(read)} (set [cluster] remote or --remote to the remote the submitters push to, and check this account's access to it)`,
    );
  } else {
    const ref = probeRef(workerId);
    const pushed = await git(top, ["push", "--quiet", "--no-verify", remote, `HEAD:${ref}`], {
      allowFailure: true,
    });
    if (pushed.code !== 0) {
      problems.push(
        `cannot push to the git remote ${remote}: ${lastLine(pushed)} (a worker pushes each task's result there as refs/caesar/tasks/<id>: give this account write access)`,
      );
    } else {
      await git(top, ["push", "--quiet", "--no-verify", remote, `:${ref}`], { allowFailure: true });
    }
  }
  const disk = await statfs(top).catch(() => undefined);
  if (disk && disk.bavail * disk.bsize < MIN_FREE_BYTES) {
    const free = Math.floor((disk.bavail * disk.bsize) / 1024 / 1024);
    problems.push(
      `only ${free} MiB free on the disk of ${top} (needs ${MIN_FREE_BYTES / 1024 / 1024} MiB): free some space`,
    );
  }
  if (problems.length > 0) {
    throw new CaesarError(
      "worker_unhealthy",
      `Worker ${workerId} failed its start-up check: it takes no task.`,
      {
        detail: problems.map((problem) => `- ${problem}`).join("\n"),
      },
    );
  }
}

function lastLine(result: { stdout: string; stderr: string }): string {
  const lines = (result.stderr || result.stdout).trim().split("\n").filter(Boolean);
  return lines[lines.length - 1] ?? "git failed";
}
