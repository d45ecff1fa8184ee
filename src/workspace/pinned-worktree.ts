import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, realpathSync } from "node:fs";
import { lstat, readFile, readlink, rename, writeFile } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { CaesarError } from "../support/errors.js";
import { randomHex } from "../support/random.js";

/** `<project>/.caesar/wt/<name>`, or a path inside it: a task's worktree. */
const IN_WORKTREE = /^(.+?)\/\.caesar\/wt\/([^/]+)(?:\/.*)?$/;

/** A task worktree, with the git dir its project registered for it. */
export interface PinnedWorktree {
  top: string;
  gitDir: string;
}

/** Worktree top → registered git dir, checked again at each use (a worktree can be removed and re-added). */
const known = new Map<string, string>();

/**
 * The git dir of the caesar worktree containing `dir`, as the project's repository registered it
 * (`<common dir>/worktrees/<name>`, whose `gitdir` file names this worktree) — never as the worktree's
 * own `.git` file says. That file is inside the agent's workspace: an agent that points it at a git dir
 * of its making (whose configuration runs `core.fsmonitor`, a clean filter…) would otherwise have caesar
 * run its commands outside any sandbox, and diff against objects it chose. Undefined outside a worktree.
 */
export function pinnedWorktreeOf(dir: string): PinnedWorktree | undefined {
  const match = IN_WORKTREE.exec(resolve(dir));
  if (!match) return undefined;
  const top = `${match[1]}/.caesar/wt/${match[2]}`;
  const cached = known.get(top);
  if (cached && registers(cached, top)) return { top, gitDir: cached };
  const found = findRegistration(commonDirOf(match[1]!, top), top);
  if (found) return found;
  // The project's git dir may have moved since it was asked (`git init --separate-git-dir`, absorbed into
  // another repository): ask git again before saying the worktree is not registered.
  commonDirs.delete(match[1]!);
  const again = findRegistration(commonDirOf(match[1]!, top), top);
  if (again) return again;
  throw unregistered(top);
}

function findRegistration(commonDir: string, top: string): PinnedWorktree | undefined {
  const worktrees = join(commonDir, "worktrees");
  // git names a worktree's folder after the worktree's own (a number added when that name is taken): that
  // one is looked at first, and the others — as many as the project's worktrees — only when it is not it.
  const named = join(worktrees, basename(top));
  if (registers(named, top)) {
    known.set(top, named);
    return { top, gitDir: named };
  }
  let names: string[] = [];
  try {
    names = readdirSync(worktrees);
  } catch {
    // no worktree registered at all
  }
  for (const name of names) {
    const gitDir = join(worktrees, name);
    if (registers(gitDir, top)) {
      known.set(top, gitDir);
      return { top, gitDir };
    }
  }
  return undefined;
}

/** The `.git` file a worktree registered at `gitDir` should have. */
export function pointerTo(gitDir: string): string {
  return `gitdir: ${gitDir}\n`;
}

function registers(gitDir: string, top: string): boolean {
  let recorded: string;
  try {
    recorded = readFileSync(join(gitDir, "gitdir"), "utf8").trim();
  } catch {
    return false;
  }
  const expected = join(top, ".git");
  if (recorded === expected) return true;
  try {
    return recorded === join(realpathSync(top), ".git");
  } catch {
    return false;
  }
}

/** Project → its git common dir: asked of git once per process (a blocking call, on the service's loop). */
const commonDirs = new Map<string, string>();

function commonDirOf(project: string, top: string): string {
  const cached = commonDirs.get(project);
  if (cached) return cached;
  const found = askCommonDir(project, top);
  commonDirs.set(project, found);
  return found;
}

function askCommonDir(project: string, top: string): string {
  try {
    return execFileSync("git", ["rev-parse", "--path-format=absolute", "--git-common-dir"], {
      cwd: project,
      encoding: "utf8",
      env: { ...process.env, GIT_DIR: undefined, GIT_WORK_TREE: undefined, LC_ALL: "C" },
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    throw unregistered(top);
  }
}

function unregistered(top: string): CaesarError {
  return new CaesarError("worktree_unregistered", `${top} is not a worktree its project's git knows of.`, {
    detail:
      "caesar runs git in a task's worktree only through the git dir its project registered for it. The worktree was removed or pruned (`git worktree list` in the project says which remain).",
  });
}

/**
 * Put a task worktree's `.git` file back when it no longer points at the registered git dir (so that
 * whoever runs git in the worktree later — the person, their editor — is not running the agent's
 * configuration). Says what was there instead, or undefined when it was intact. A directory or link
 * found there is moved to `aside` (evidence; nothing the agent made is deleted).
 */
export async function restoreWorktreePointer(worktree: string, aside: string): Promise<string | undefined> {
  const pinned = pinnedWorktreeOf(worktree);
  if (!pinned) return undefined;
  const path = join(pinned.top, ".git");
  const expected = pointerTo(pinned.gitDir);
  const info = await lstat(path).catch(() => undefined);
  let found: string;
  if (info?.isFile()) {
    // A pointer is one short line: a huge file is not read into memory to be described.
    const text = info.size <= 4096 ? await readFile(path, "utf8") : undefined;
    if (text === expected) return undefined;
    found =
      text === undefined
        ? `a file of ${info.size} bytes`
        : `a file saying ${JSON.stringify(text.trim().slice(0, 300))}`;
  } else if (!info) {
    found = "nothing: the file was deleted";
  } else {
    found = info.isSymbolicLink()
      ? `a symbolic link to ${await readlink(path)}`
      : info.isDirectory()
        ? "a directory"
        : "something other than a file";
    await rename(path, aside);
    found += ` (moved to ${aside})`;
  }
  const temp = `${path}.caesar-${randomHex(4)}`;
  await writeFile(temp, expected, { flag: "wx" });
  await rename(temp, path);
  return found;
}
