import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { git } from "./git.js";

/** A readable branch name: `caesar/<agent-or-role>/<objective-slug>-<8 hex>`. */
export function branchNameFor(who: string, objective: string, taskId: string): string {
  const hex =
    taskId
      .replace(/^t_/, "")
      .replace(/[^0-9a-z]/gi, "")
      .slice(0, 8) || "task";
  return `caesar/${slugify(who, 24) || "agent"}/${slugify(objective, 40) || "task"}-${hex}`;
}

export function slugify(text: string, max: number): string {
  const slug = text
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return slug.slice(0, max).replace(/-+$/, "");
}

/** Create a worktree at `path` on a new branch starting at `baseRef` (a commit SHA, frozen). */
export async function addWorktree(
  repo: string,
  path: string,
  branch: string,
  baseRef: string,
): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await git(repo, ["worktree", "add", "--quiet", "-b", branch, path, baseRef]);
}

/** Remove a worktree (even with changes in it: callers decide whether that work may go) and its branch. */
export async function removeWorktree(repo: string, path: string, branch: string | null): Promise<void> {
  await git(repo, ["worktree", "remove", "--force", "--force", path], { allowFailure: true });
  await git(repo, ["worktree", "prune"], { allowFailure: true });
  if (branch) await git(repo, ["branch", "-D", branch], { allowFailure: true });
}
