import type { ChangeAction } from "../protocol/report.js";
import { git, gitOut } from "./git.js";

export interface ObservedChange {
  path: string;
  action: ChangeAction;
  /** For a rename: the path before. */
  from?: string;
}

/**
 * How alike a deleted and an added file must be for git to call the pair a rename: git's default,
 * 50% similarity (`--find-renames=50%`).
 */
export const RENAME_SIMILARITY = "50%";

const STATUS_TO_ACTION: Record<string, ChangeAction> = {
  A: "added",
  M: "modified",
  D: "deleted",
  T: "modified",
};

/** The files that differ between two trees, as git sees them, renames detected (RENAME_SIMILARITY). */
export async function changedFiles(cwd: string, fromTree: string, toTree: string): Promise<ObservedChange[]> {
  if (fromTree === toTree) return [];
  const out = await gitOut(cwd, [
    "diff-tree",
    "-r",
    `--find-renames=${RENAME_SIMILARITY}`,
    "--name-status",
    "-z",
    fromTree,
    toTree,
  ]);
  const fields = out.split("\0").filter((field) => field !== "");
  const changes: ObservedChange[] = [];
  for (let i = 0; i + 1 < fields.length; ) {
    const status = fields[i]!.charAt(0);
    // A rename (R<score>) names two paths: before, then after.
    if (status === "R" && i + 2 < fields.length) {
      changes.push({ path: fields[i + 2]!, action: "renamed", from: fields[i + 1]! });
      i += 3;
      continue;
    }
    changes.push({ path: fields[i + 1]!, action: STATUS_TO_ACTION[status] ?? "modified" });
    i += 2;
  }
  return changes;
}

/** Every path a change touches: both paths of a rename. */
export function touchedPaths(changes: readonly ObservedChange[]): string[] {
  return changes.flatMap((change) => (change.from ? [change.from, change.path] : [change.path]));
}

/**
 * Is the work tree at `top` exactly its commit `base` — HEAD still there, nothing staged, modified or
 * untracked (ignored files aside, as in every snapshot)? One `git status` instead of a snapshot: the
 * common end of a task that changed nothing. Anything else (or any doubt) answers false.
 */
export async function isPristine(top: string, base: string): Promise<boolean> {
  const out = await gitOut(top, [
    "status",
    "--porcelain=v2",
    "--branch",
    "-z",
    "--untracked-files=all",
    // A submodule's commit counts, not what is inside it: looking inside would run git there, under
    // the configuration of a repository the agent controls (and the snapshot records only the commit).
    "--ignore-submodules=dirty",
  ]).catch(() => undefined);
  if (out === undefined) return false;
  const records = out.split("\0").filter((record) => record !== "");
  return records.every((record) => record.startsWith("# ")) && records.includes(`# branch.oid ${base}`);
}

/**
 * Which of `paths` have uncommitted changes (staged, unstaged or untracked) in the work tree at `top`.
 * Read from `git status --porcelain -z`, whose records keep a path whole whatever it contains.
 */
export async function uncommittedPaths(top: string, paths: readonly string[]): Promise<string[]> {
  if (paths.length === 0) return [];
  const { stdout } = await git(top, [
    "status",
    "--porcelain",
    "-z",
    "--untracked-files=all",
    // Never inside a submodule (git would run there, under its own configuration).
    "--ignore-submodules=dirty",
    "--",
    ...paths,
  ]);
  const records = stdout.split("\0");
  const dirty: string[] = [];
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    if (record.length < 4) continue;
    // "XY path"; a rename or copy is followed by a record holding the path it came from.
    dirty.push(record.slice(3));
    if (record[0] === "R" || record[0] === "C") i += 1;
  }
  return dirty;
}

/** The patch between two trees (binary-safe), as `caesar diff` shows it. */
export async function diffText(
  cwd: string,
  fromTree: string,
  toTree: string,
  options: { stat?: boolean } = {},
) {
  // Without rename detection: the patch stays a plain list of whole-file changes that every reader
  // (the dashboard's diff view, `git apply`) takes as it is.
  const args = ["diff", "--no-color", "--no-renames", options.stat ? "--stat" : "--binary"];
  return (await git(cwd, [...args, fromTree, toTree])).stdout;
}
