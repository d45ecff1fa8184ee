import { execFile } from "node:child_process";
import { cp, lstat, mkdir, symlink } from "node:fs/promises";
import { dirname, isAbsolute, join, normalize, sep } from "node:path";
import { UsageError } from "../support/errors.js";

/** A `[worktree]` path must stay inside the project: relative, no `..`. */
export function checkProjectRelativePath(path: string, key: string): string {
  const normalized = normalize(path).replace(/\/+$/, "");
  if (path.trim() === "" || isAbsolute(path) || normalized === ".." || normalized.startsWith(`..${sep}`)) {
    throw new UsageError(
      "config_bad_path",
      `[worktree] ${key}: ${JSON.stringify(path)} is not a path inside the project.`,
      {
        detail: 'Use a path relative to the project root, like ".env" or "node_modules".',
      },
    );
  }
  return normalized;
}

export interface Materialised {
  /** Every path placed in the worktree by caesar (copied or linked): excluded from diffs. */
  materialised: string[];
  /** The subset shared through symlinks: writes there reach the main tree. */
  linked: string[];
  /** Paths named in the configuration that did not exist in the project. */
  missing: string[];
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}

function copyWithReflink(source: string, target: string): Promise<boolean> {
  return new Promise((resolve) => {
    // GNU cp clones (reflink) where the filesystem allows it and copies otherwise.
    execFile("cp", ["-a", "--reflink=auto", source, target], (error) => resolve(!error));
  });
}

/** Copy and link what `[worktree]` names from the project into a new worktree. */
export async function materialise(
  root: string,
  worktree: string,
  spec: { copy: readonly string[]; link: readonly string[] },
): Promise<Materialised> {
  const result: Materialised = { materialised: [], linked: [], missing: [] };
  for (const raw of spec.copy) {
    const path = checkProjectRelativePath(raw, "copy");
    const source = join(root, path);
    const target = join(worktree, path);
    if (!(await exists(source))) {
      result.missing.push(path);
      continue;
    }
    if (await exists(target)) continue; // tracked content is already there: never clobber it
    await mkdir(dirname(target), { recursive: true });
    if (!(await copyWithReflink(source, target)))
      await cp(source, target, { recursive: true, preserveTimestamps: true });
    result.materialised.push(path);
  }
  for (const raw of spec.link) {
    const path = checkProjectRelativePath(raw, "link");
    const source = join(root, path);
    const target = join(worktree, path);
    if (!(await exists(source))) {
      result.missing.push(path);
      continue;
    }
    if (await exists(target)) continue;
    await mkdir(dirname(target), { recursive: true });
    await symlink(source, target);
    result.materialised.push(path);
    result.linked.push(path);
  }
  return result;
}
