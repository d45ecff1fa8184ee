import { gitOut } from "./git.js";

export interface DiffSize {
  files: number;
  insertions: number;
  deletions: number;
  /** Files git counts as binary (no line counts). */
  binary: number;
}

/** How big the change between two trees is, in files and lines (`git diff --numstat`). */
export async function diffSize(cwd: string, fromTree: string, toTree: string): Promise<DiffSize> {
  const size: DiffSize = { files: 0, insertions: 0, deletions: 0, binary: 0 };
  if (fromTree === toTree) return size;
  const out = await gitOut(cwd, ["diff", "--numstat", "--no-renames", fromTree, toTree]);
  for (const line of out.split("\n")) {
    const [added, deleted] = line.split("\t");
    if (added === undefined || deleted === undefined) continue;
    size.files += 1;
    if (added === "-" || deleted === "-") size.binary += 1;
    else {
      size.insertions += Number(added);
      size.deletions += Number(deleted);
    }
  }
  return size;
}
