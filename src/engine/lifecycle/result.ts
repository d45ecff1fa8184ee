import { existsSync } from "node:fs";
import { CaesarError } from "../../support/errors.js";
import {
  changedFiles,
  diffText,
  type ObservedChange,
  touchedPaths,
  uncommittedPaths,
} from "../../workspace/changes.js";
import { CAESAR_GIT_IDENTITY, git, gitOut } from "../../workspace/git.js";
import { fetchResultCommit } from "../../workspace/result-ref.js";
import { snapshotTree } from "../../workspace/snapshot.js";
import type { TaskState } from "../store/state.js";

export interface TaskResult {
  /** The git work tree the trees belong to. */
  top: string;
  from: string;
  to: string;
  changes: ObservedChange[];
  /** Where `to` was read: the live worktree, or the result commit kept after the worktree went. */
  origin: "worktree" | "workspace" | "result-commit";
}

/**
 * A task's verified change, recomputed now: from the tree it started from to the workspace as it is
 * (or, when its worktree is gone, to the result commit recorded when it finished). Materialised paths
 * are excluded, as they were when the task ended.
 */
export async function taskResult(state: TaskState, repoTop: string | null): Promise<TaskResult> {
  if (!state.start_tree) {
    throw new CaesarError(
      "no_git_result",
      `Task ${state.id} has no git starting point: its changes cannot be verified.`,
      {
        detail:
          state.phase === "finished"
            ? "It ran outside a git repository (or failed before starting); its report's changes are the agent's declaration."
            : "It has not started its agent yet; retry when it runs.",
      },
    );
  }
  if (state.remote) return remoteResult(state, repoTop ?? state.root);
  if (state.worktree && existsSync(state.worktree)) {
    const to = await snapshotTree(state.worktree, state.materialised);
    return {
      top: state.worktree,
      from: state.start_tree,
      to,
      changes: await changedFiles(state.worktree, state.start_tree, to),
      origin: "worktree",
    };
  }
  const top = repoTop ?? state.root;
  if (!state.worktree) {
    const to = await snapshotTree(top, state.materialised);
    return {
      top,
      from: state.start_tree,
      to,
      changes: await changedFiles(top, state.start_tree, to),
      origin: "workspace",
    };
  }
  if (state.end_tree && state.end_tree === state.start_tree) {
    // It changed nothing: no result commit was kept, and none is needed.
    return { top, from: state.start_tree, to: state.end_tree, changes: [], origin: "result-commit" };
  }
  if (state.result_commit) {
    const to = await gitOut(top, ["rev-parse", `${state.result_commit}^{tree}`]);
    return {
      top,
      from: state.start_tree,
      to,
      changes: await changedFiles(top, state.start_tree, to),
      origin: "result-commit",
    };
  }
  throw new CaesarError(
    "result_gone",
    `Task ${state.id}'s worktree is gone and no result commit was recorded.`,
    {
      detail: "Its changes can no longer be shown or applied.",
    },
  );
}

/** A remote task's change: from its start tree to its result commit, fetched from the shared remote. */
async function remoteResult(state: TaskState, top: string): Promise<TaskResult> {
  const from = state.start_tree!;
  if (state.end_tree && state.end_tree === from)
    return { top, from, to: state.end_tree, changes: [], origin: "result-commit" };
  if (!state.result_commit) {
    throw new CaesarError(
      state.phase === "finished" ? "result_gone" : "task_running",
      state.phase === "finished"
        ? `Task ${state.id} finished without a result commit on ${state.remote!.git_remote}.`
        : `Task ${state.id} is still ${state.phase} on ${state.remote!.worker?.id ?? "the cluster"}.`,
      {
        detail:
          state.phase === "finished"
            ? "Its worker could not push it (see the task's error); its changes cannot be shown here."
            : `Its change comes back when it finishes: caesar logs ${state.id} --follow.`,
      },
    );
  }
  await fetchResultCommit(top, state.remote!.git_remote, state.id, state.result_commit);
  const to = await gitOut(top, ["rev-parse", `${state.result_commit}^{tree}`]);
  return { top, from, to, changes: await changedFiles(top, from, to), origin: "result-commit" };
}

export async function taskPatch(result: TaskResult, options: { stat?: boolean } = {}): Promise<string> {
  return diffText(result.top, result.from, result.to, options);
}

export interface ApplyOutcome {
  files: string[];
  head: string;
}

/**
 * Integrate a worktree task's change into the main working tree with a three-way merge. Refuses —
 * changing nothing — when a file it touches has uncommitted changes of the user's, or when the merge
 * with the current HEAD conflicts. The result is staged, not committed.
 */
export async function applyResult(
  state: TaskState,
  repoTop: string,
  result: TaskResult,
): Promise<ApplyOutcome> {
  const files = touchedPaths(result.changes);
  if (files.length === 0) {
    throw new CaesarError("nothing_to_apply", `Task ${state.id} changed nothing: there is nothing to apply.`);
  }
  const head = await gitOut(repoTop, ["rev-parse", "HEAD"]);
  const base = state.base_ref ?? head;
  const taskCommit = await gitOut(
    result.top,
    ["commit-tree", result.to, "-p", base, "-m", `caesar ${state.id}`],
    {
      env: CAESAR_GIT_IDENTITY,
    },
  );
  // The trees and commits of a worktree live in the shared object store, so the main tree sees them.
  const merge = await git(
    repoTop,
    ["merge-tree", "--write-tree", "--name-only", "--no-messages", head, taskCommit],
    {
      allowFailure: true,
    },
  );
  const paths = await uncommittedPaths(repoTop, files);
  if (paths.length > 0) {
    // An apply killed after git applied the change, before caesar recorded it: the work tree and the index
    // already hold the merged result. That is the apply done, not the user's changes in the way.
    if (merge.code === 0 && (await holdsAlready(repoTop, merge.stdout.trim().split("\n")[0]!, files)))
      return { files, head };
    throw new CaesarError(
      "apply_would_overwrite",
      `Applying ${state.id} would overwrite your uncommitted changes.`,
      {
        detail: `Files with uncommitted changes that the task also changed:\n${paths.map((p) => `  ${p}`).join("\n")}\nCommit or stash them, then retry. Nothing was changed.`,
      },
    );
  }
  if (merge.code !== 0) {
    const [, ...conflicts] = merge.stdout.trim().split("\n");
    throw new CaesarError(
      "apply_conflict",
      `Task ${state.id}'s change conflicts with your HEAD (${head.slice(0, 10)}).`,
      {
        detail: `Conflicting files:\n${conflicts.map((p) => `  ${p}`).join("\n")}\nNothing was changed. Resolve by hand from the task's branch ${state.branch ?? ""} (git merge), or look at \`caesar diff ${state.id}\`.`,
      },
    );
  }
  const merged = merge.stdout.trim().split("\n")[0]!;
  const patch = (await git(repoTop, ["diff", "--binary", "--no-renames", head, merged, "--", ...files]))
    .stdout;
  if (patch.trim() !== "")
    await git(repoTop, ["apply", "--index", "--binary", "--whitespace=nowarn", "-"], { input: patch });
  return { files, head };
}

/** Do the index and the work tree hold exactly `tree`'s version of each of `files`? */
async function holdsAlready(repoTop: string, tree: string, files: string[]): Promise<boolean> {
  const index = await git(repoTop, ["diff", "--cached", "--quiet", tree, "--", ...files], {
    allowFailure: true,
  });
  if (index.code !== 0) return false;
  const work = await git(repoTop, ["diff", "--quiet", tree, "--", ...files], { allowFailure: true });
  return work.code === 0;
}
