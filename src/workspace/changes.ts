import type { ChangeAction } from "../protocol/report.js";
import { git, gitOut } from "./git.js";

export interface ObservedChange {
  path: string;
  action: ChangeAction;
}

const STATUS_TO_ACTION: Record<string, ChangeAction> = {
  A: "added",
  M: "modified",
  D: "deleted",
  T: "modified",
};

/** The files that differ between two trees, as git sees them (no rename detection: deterministic). */
export async function changedFiles(cwd: string, fromTree: string, toTree: string): Promise<ObservedChange[]> {
  if (fromTree === toTree) return [];
  const out = await gitOut(cwd, ["diff-tree", "-r", "--no-renames", "--name-status", "-z", fromTree, toTree]);
  const fields = out.split("\0").filter((field) => field !== "");
  const changes: ObservedChange[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const status = fields[i]!.charAt(0);
    changes.push({ path: fields[i + 1]!, action: STATUS_TO_ACTION[status] ?? "modified" });
  }
  return changes;
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
    "--ignore-submodules=none",
  ]).catch(() => undefined);
  if (out === undefined) return false;
  const records = out.split("\0").filter((record) => record !== "");
  return records.every((record) => record.startsWith("# ")) && records.includes(`# branch.oid ${base}`);
}

/** The patch between two trees (binary-safe), as `caesar diff` shows it. */
export async function diffText(
  cwd: string,
  fromTree: string,
  toTree: string,
  options: { stat?: boolean } = {},
) {
  const args = ["diff", "--no-color", "--no-renames", options.stat ? "--stat" : "--binary"];
  return (await git(cwd, [...args, fromTree, toTree])).stdout;
}
