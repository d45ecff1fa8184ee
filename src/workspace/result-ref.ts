import { CAESAR_GIT_IDENTITY, git, gitOut } from "./git.js";

export function resultRefName(taskId: string): string {
  return `refs/caesar/tasks/${taskId}`;
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
