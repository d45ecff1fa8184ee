import { CaesarError, type ThrownCode } from "../support/errors.js";
import { git } from "../workspace/git.js";
import { resultRefName } from "../workspace/result-ref.js";
import { startRefName } from "./names.js";

/**
 * The data plane: code moves between machines through one git remote they all reach. A task's starting
 * point is pushed as `refs/caesar/start/<id>`, its result as `refs/caesar/tasks/<id>`. Outside the
 * branch and tag namespaces, so no one's `git fetch` picks them up unasked.
 */

function failure(
  code: ThrownCode,
  summary: string,
  result: { stderr: string; stdout: string },
  hint: string,
) {
  return new CaesarError(code, summary, { detail: `${(result.stderr || result.stdout).trim()}\n${hint}` });
}

/** Push the starting point of a task (a commit of the submitter's) for its worker to fetch. */
export async function pushStart(
  top: string,
  remote: string,
  taskId: string,
  commit: string,
): Promise<string> {
  const ref = startRefName(taskId);
  const pushed = await git(top, ["push", "--quiet", "--no-verify", remote, `${commit}:${ref}`], {
    allowFailure: true,
  });
  // Pushed already (by another process sending the same task): the ref names the commit, as wanted.
  if (pushed.code !== 0 && (await remoteRef(top, remote, ref).catch(() => "")) !== commit) {
    throw failure(
      "start_push_failed",
      `Could not push the task's starting point to ${remote}.`,
      pushed,
      "Workers fetch the code from that remote: check that this clone can push there ([cluster] remote), then retry.",
    );
  }
  return ref;
}

/** Fetch a task's starting point into a worker's clone and check it is the commit the task names. */
export async function fetchStart(top: string, remote: string, taskId: string, commit: string): Promise<void> {
  const ref = startRefName(taskId);
  const fetched = await git(top, ["fetch", "--quiet", "--no-tags", remote, `+${ref}:${ref}`], {
    allowFailure: true,
  });
  if (fetched.code !== 0) {
    throw failure(
      "start_fetch_failed",
      `The worker could not fetch ${ref} from ${remote}.`,
      fetched,
      "The submitter and the worker must share one git remote ([cluster] remote on both sides).",
    );
  }
  const got = (
    await git(top, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], { allowFailure: true })
  ).stdout.trim();
  if (got !== commit) {
    throw new CaesarError(
      "start_ref_mismatch",
      `${ref} on ${remote} is ${got || "missing"}, not ${commit}.`,
      {
        detail: "The starting point was moved after the task was sent; send the task again.",
      },
    );
  }
}

/** What a ref is on the remote now ("" when it does not exist). */
export async function remoteRef(top: string, remote: string, ref: string): Promise<string> {
  const listed = await git(top, ["ls-remote", "--quiet", remote, ref], { allowFailure: true });
  if (listed.code !== 0) {
    throw failure("remote_unreachable", `Could not read ${ref} on ${remote}.`, listed, "Check the remote.");
  }
  return listed.stdout.split("\t")[0]?.trim() ?? "";
}

/**
 * Push a task's result commit as `refs/caesar/tasks/<id>`, only over the value the remote had when the
 * pusher last checked it (`expected`, "" for none): a push that lost that race is refused by git, and
 * the caller checks its claim before trying again with what the remote holds now.
 */
export async function pushResult(
  top: string,
  remote: string,
  taskId: string,
  commit: string,
  expected: string,
): Promise<"pushed" | "stale"> {
  const ref = resultRefName(taskId);
  const pushed = await git(
    top,
    ["push", "--quiet", "--no-verify", `--force-with-lease=${ref}:${expected}`, remote, `${commit}:${ref}`],
    { allowFailure: true },
  );
  if (pushed.code === 0) return "pushed";
  if (/stale info|rejected/i.test(pushed.stderr)) return "stale";
  throw failure(
    "result_push_failed",
    `Could not push the task's result to ${remote}.`,
    pushed,
    "The worker keeps it under the same ref in its clone.",
  );
}

/** Remove a task's starting-point ref once it finished (its result commit keeps the objects alive). */
export async function deleteStart(top: string, remote: string, taskId: string): Promise<void> {
  await git(top, ["push", "--quiet", "--no-verify", remote, `:${startRefName(taskId)}`], {
    allowFailure: true,
  });
}
