import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Finding } from "../../protocol/report.js";
import { restoreWorktreePointer } from "../../workspace/pinned-worktree.js";

/** A worktree whose `.git` the agent re-pointed is put back, and the report says so. */
export async function pointerFindings(worktree: string, dir: string): Promise<Finding[]> {
  // A worktree removed meanwhile has no pointer to check (what it changed cannot be verified either).
  if (!existsSync(worktree)) return [];
  const aside = join(dir, `replaced-dot-git-${Date.now()}`);
  let found: string | undefined;
  try {
    found = await restoreWorktreePointer(worktree, aside);
  } catch (error) {
    return [
      {
        severity: "high",
        title: "The worktree's .git could not be checked",
        detail: `${(error as Error).message}. caesar's own git commands use the git dir the project registered, whatever it says; check ${join(worktree, ".git")} before running git there yourself.`,
      },
    ];
  }
  if (found === undefined) return [];
  return [
    {
      severity: "high",
      title: "The worktree's .git was re-pointed during the task",
      detail: `caesar found ${found} instead of its pointer to the git dir the project registered, and put the pointer back. caesar's own git commands never followed it.`,
    },
  ];
}
