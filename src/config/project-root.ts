import { existsSync, statSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { UsageError } from "../support/errors.js";

const WORKTREES_SEGMENT = `${sep}.caesar${sep}wt${sep}`;

/**
 * The project root: `--root` when given, else the nearest ancestor of `cwd` holding `.caesar/` or `.git`.
 * A task's worktree (`<root>/.caesar/wt/<id>`) belongs to the project that made it, so an agent that
 * calls caesar from inside its worktree reaches the same task store (and the same governance).
 * Outside any project, the current directory.
 */
export function findProjectRoot(cwd: string, explicitRoot?: string): string {
  if (explicitRoot !== undefined) {
    const root = resolve(cwd, explicitRoot);
    if (!existsSync(root) || !statSync(root).isDirectory()) {
      throw new UsageError("root_not_found", `--root ${explicitRoot}: no such directory.`, {
        detail:
          "Pass the path of an existing project directory, or omit --root to use the nearest .caesar/ or .git.",
      });
    }
    return ownerOfWorktree(root) ?? root;
  }
  const start = resolve(cwd);
  const owner = ownerOfWorktree(start);
  if (owner) return owner;
  let dir = start;
  for (;;) {
    if (isDirectory(join(dir, ".caesar")) || existsSync(join(dir, ".git"))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return start;
    dir = parent;
  }
}

function ownerOfWorktree(path: string): string | undefined {
  const index = `${path}${sep}`.indexOf(WORKTREES_SEGMENT);
  if (index === -1) return undefined;
  const owner = path.slice(0, index) || sep;
  return isDirectory(join(owner, ".caesar")) ? owner : undefined;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
