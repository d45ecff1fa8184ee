import { CaesarError } from "../support/errors.js";
import { CAESAR_GIT_IDENTITY, git, gitOut } from "./git.js";

export function resultRefName(taskId: string): string {
  return `refs/caesar/tasks/${taskId}`;
}

/**
 * A cluster task's result kept on the shared remote whatever `[cluster] keep_results` says: applied, or
 * pinned (`caesar cluster pin`). Workers prune `refs/caesar/tasks/<id>` only where this ref is absent.
 */
export function keepRefName(taskId: string): string {
  return `refs/caesar/keep/${taskId}`;
}

/** Mark a result kept on `remote` (its commit under `refs/caesar/keep/<id>`): the git error, or undefined. */
export function pushKeepRef(
  top: string,
  remote: string,
  taskId: string,
  commit: string,
): Promise<string | undefined> {
  return pushRefspec(top, remote, `${commit}:${keepRefName(taskId)}`);
}

/** Let the result be pruned again: the git error, or undefined. */
export function deleteKeepRef(top: string, remote: string, taskId: string): Promise<string | undefined> {
  return pushRefspec(top, remote, `:${keepRefName(taskId)}`);
}

async function pushRefspec(top: string, remote: string, refspec: string): Promise<string | undefined> {
  const pushed = await git(top, ["push", "--quiet", "--no-verify", remote, refspec], { allowFailure: true });
  return pushed.code === 0
    ? undefined
    : (pushed.stderr || pushed.stdout).trim() || `git push exited ${pushed.code}`;
}

/**
 * Keep a task's result as a commit (its end tree on top of its base) under `refs/caesar/tasks/<id>`, so
 * `caesar diff` and `caesar apply` still work after its worktree is gone, and no `git gc` prunes it.
 */
export async function recordResultCommit(
  top: string,
  taskId: string,
  endTree: string,
  baseRef: string | null,
  message: string,
): Promise<string> {
  const args = ["commit-tree", endTree, ...(baseRef ? ["-p", baseRef] : []), "-m", message];
  const commit = await gitOut(top, args, { env: CAESAR_GIT_IDENTITY });
  await git(top, ["update-ref", resultRefName(taskId), commit]);
  return commit;
}

/** Is this commit in the repository's object store? */
export async function hasCommit(top: string, commit: string): Promise<boolean> {
  return (await git(top, ["cat-file", "-e", `${commit}^{commit}`], { allowFailure: true })).code === 0;
}

/**
 * Bring a task's result commit from the remote it was pushed to (`refs/caesar/tasks/<id>`), unless it is
 * here already. Refuses a ref that names another commit than the one the task finished with.
 */
export async function fetchResultCommit(
  top: string,
  remote: string,
  taskId: string,
  commit: string,
): Promise<void> {
  if (await hasCommit(top, commit)) return;
  const ref = resultRefName(taskId);
  const fetched = await git(top, ["fetch", "--quiet", "--no-tags", remote, `+${ref}:${ref}`], {
    allowFailure: true,
  });
  if (fetched.code !== 0) {
    throw new CaesarError("result_fetch_failed", `Could not fetch ${ref} from ${remote}.`, {
      detail: `${fetched.stderr.trim() || fetched.stdout.trim()}\nThe task's worker pushed its result there: check that this clone reaches the remote (git fetch ${remote}), then retry.`,
    });
  }
  if (!(await hasCommit(top, commit))) {
    const got = await gitOut(top, ["rev-parse", "--verify", "--quiet", ref]).catch(() => "");
    throw new CaesarError(
      "result_ref_mismatch",
      `${ref} on ${remote} is ${got || "missing"}, not the task's result ${commit}.`,
      {
        detail: "Someone moved the ref after the task finished; the task's own result is not on the remote.",
      },
    );
  }
}
