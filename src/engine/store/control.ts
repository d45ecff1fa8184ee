import { readFileSync, statSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { basename, dirname, join, resolve, sep } from "node:path";
import { isValidTaskId } from "../../protocol/ids.js";
import { makePrivateDir, PRIVATE_DIR_MODE } from "../../support/private-dir.js";
import { projectPaths } from "./project.js";

/**
 * caesar's control directory: where the records that **decide** live — each task's authoritative
 * `state.json` and `plan.json` (parentage, depth, kind, envelope, budget tree, credentials' hash,
 * processes, isolation), the budget ledgers and the slots. The task directory the agent is given
 * (`.caesar/tasks/<id>/`) holds OACP's files and a **mirror** of state.json and plan.json for readers;
 * caesar never takes a decision from the mirror.
 *
 * In a git repository it is `<git common dir>/caesar/`: outside every directory an adapter's sandbox
 * opens for writing (codex's workspace-write confines writes to the workspace, the extra directories
 * caesar passes — the task directory — and /tmp, and keeps `.git` read-only even in place), bound to
 * the project (a process cannot point caesar at other records without pointing it at another project),
 * and found by reading files, never from the environment (`GIT_DIR` cannot redirect it). Outside git,
 * `.caesar/state/control/`: an in-place agent can write there (see docs/threat-model.md).
 */
export interface ControlPaths {
  dir: string;
  /** Whether the directory is protected by living in git's common directory. */
  inGit: boolean;
  tasks: string;
  budgets: string;
  slots: string;
}

const cache = new Map<string, ControlPaths>();

export function controlPaths(root: string): ControlPaths {
  const key = resolve(root);
  const known = cache.get(key);
  if (known) return known;
  const common = findGitCommonDir(key);
  const dir = common ? join(common, "caesar") : join(projectPaths(key).state, "control");
  const paths: ControlPaths = {
    dir,
    inGit: common !== undefined,
    tasks: join(dir, "tasks"),
    budgets: join(dir, "budgets"),
    slots: join(dir, "slots"),
  };
  cache.set(key, paths);
  return paths;
}

/**
 * Create a task's folder of records, 0700 like the control directory above it (narrowed if an older
 * caesar made them 0755): another account reads no record.
 */
export async function makePrivateControlDir(taskControlDir: string): Promise<void> {
  await makePrivateDir(dirname(dirname(taskControlDir)));
  await mkdir(taskControlDir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/** Where a task's authoritative records are kept. */
export interface ControlTaskPaths {
  dir: string;
  state: string;
  plan: string;
  /** What caesar refused this task's agent, one JSON line each (read back as findings at the end). */
  refusals: string;
  lock: string;
}

export function controlTaskPaths(root: string, id: string): ControlTaskPaths {
  const dir = join(controlPaths(root).tasks, id);
  return {
    dir,
    state: join(dir, "state.json"),
    plan: join(dir, "plan.json"),
    refusals: join(dir, "refusals.jsonl"),
    lock: join(dir, ".state.lock"),
  };
}

const TASKS_SEGMENT = `${sep}.caesar${sep}tasks${sep}`;

/**
 * The project root and id of a task directory made by caesar (`<root>/.caesar/tasks/<id>`); undefined
 * for any other directory (tests and tools that build a task directory elsewhere get no control record).
 */
export function taskLocationOf(dir: string): { root: string; id: string } | undefined {
  const full = resolve(dir);
  const id = basename(full);
  const parent = dirname(full);
  if (!isValidTaskId(id) || !`${parent}${sep}`.endsWith(TASKS_SEGMENT)) return undefined;
  return { root: dirname(dirname(parent)), id };
}

/** The control record paths of a task directory, when it is one of caesar's. */
export function controlOfTaskDir(dir: string): ControlTaskPaths | undefined {
  const location = taskLocationOf(dir);
  return location ? controlTaskPaths(location.root, location.id) : undefined;
}

/**
 * The git common directory of the repository holding `start`, read from the files themselves: a `.git`
 * directory, or a `.git` file (`gitdir: …`) whose `commondir` names the shared one (linked worktrees).
 */
export function findGitCommonDir(start: string): string | undefined {
  let dir = resolve(start);
  for (;;) {
    const dotGit = join(dir, ".git");
    const kind = kindOf(dotGit);
    if (kind === "dir") return dotGit;
    if (kind === "file") {
      const gitdir = readGitdirPointer(dotGit, dir);
      if (gitdir) {
        try {
          return resolve(gitdir, readFileSync(join(gitdir, "commondir"), "utf8").trim());
        } catch {
          return gitdir;
        }
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function kindOf(path: string): "dir" | "file" | undefined {
  try {
    const info = statSync(path);
    return info.isDirectory() ? "dir" : info.isFile() ? "file" : undefined;
  } catch {
    return undefined;
  }
}

function readGitdirPointer(file: string, base: string): string | undefined {
  try {
    const match = /^gitdir:\s*(.+)$/m.exec(readFileSync(file, "utf8"));
    return match ? resolve(base, match[1]!.trim()) : undefined;
  } catch {
    return undefined;
  }
}
