import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { messageOf } from "../support/errors.js";
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
  await oneAtATime(repo, async () => {
    for (let attempt = 1; ; attempt++) {
      try {
        await git(repo, ["worktree", "add", "--quiet", "-b", branch, path, baseRef]);
        return;
      } catch (error) {
        // git 2.39: a `worktree add` reads every other worktree's metadata, and fails on one another
        // process is writing that very moment ("failed to read .git/worktrees/<id>/commondir"). Nothing
        // was made: try again.
        if (attempt >= 4 || !/failed to read .*worktrees\/.*(commondir|gitdir)/.test(messageOf(error)))
          throw error;
        await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
      }
    }
  });
}

/** Remove a worktree (even with changes in it: callers decide whether that work may go) and its branch. */
export async function removeWorktree(repo: string, path: string, branch: string | null): Promise<void> {
  await oneAtATime(repo, async () => {
    await git(repo, ["worktree", "remove", "--force", "--force", path], { allowFailure: true });
    await git(repo, ["worktree", "prune"], { allowFailure: true });
  });
  if (branch) await git(repo, ["branch", "-D", branch], { allowFailure: true });
}

/**
 * git's worktree commands are not safe to run at once in one repository (each reads the others' half-written
 * metadata). The conductor service runs every task's in one process: they take turns, per repository.
 */
const turns = new Map<string, Promise<unknown>>();

function oneAtATime<T>(repo: string, work: () => Promise<T>): Promise<T> {
  const previous = turns.get(repo) ?? Promise.resolve();
  const mine = previous.catch(() => undefined).then(work);
  const settled = mine.catch(() => undefined);
  turns.set(repo, settled);
  void settled.then(() => {
    if (turns.get(repo) === settled) turns.delete(repo);
  });
  return mine;
}
