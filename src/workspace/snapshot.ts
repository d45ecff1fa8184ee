import { copyFile, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { errnoOf } from "../support/errors.js";
import { randomHex } from "../support/random.js";
import { CAESAR_GIT_IDENTITY, git, gitOut } from "./git.js";
import { pinnedWorktreeOf } from "./pinned-worktree.js";

/** caesar's own folders (of this project, or of any project nested in the work tree): never part of a change. */
export const CAESAR_OWN_PATHS = [".caesar/tasks", ".caesar/wt", ".caesar/state", ".caesar/chat"];

const ADD_ATTEMPTS = 3;
const VANISHED = /unable to stat|unable to index|No such file or directory/;

/**
 * The index file of the work tree whose top is `workdir`: `.git/index`, a task worktree's registered git
 * dir's `index`, or for another linked worktree the `index` of the git dir its `.git` file points to. Read directly (one process less per snapshot); git is
 * asked only for layouts this does not recognise.
 */
async function indexPath(workdir: string): Promise<string> {
  const pinned = pinnedWorktreeOf(workdir);
  if (pinned) return join(pinned.gitDir, "index");
  const dotGit = join(workdir, ".git");
  try {
    const info = await stat(dotGit);
    if (info.isDirectory()) return join(dotGit, "index");
    const pointer = /^gitdir:\s*(.+?)\s*$/m.exec(await readFile(dotGit, "utf8"));
    if (pointer) return join(resolve(workdir, pointer[1]!), "index");
  } catch {
    // fall through
  }
  return gitOut(workdir, ["rev-parse", "--path-format=absolute", "--git-path", "index"]);
}

/**
 * Snapshot the working tree of `workdir` as a git tree object — tracked changes, untracked files
 * (respecting .gitignore), and committed work alike — without touching the user's index: it works on a
 * copy of the index (which keeps git's stat cache, so only changed files are hashed). `excluded` paths
 * keep whatever the index had for them (prefix semantics: a directory covers what it contains).
 *
 * caesar's own folders and the excluded paths are left out of `git add` by exclusion pathspecs, so git
 * never even lists them: another task's lock file that vanishes mid-snapshot cannot fail this one.
 */
export async function snapshotTree(workdir: string, excluded: readonly string[] = []): Promise<string> {
  const realIndex = await indexPath(workdir);
  const working = join(tmpdir(), `caesar-index-${process.pid}-${randomHex(6)}`);
  try {
    try {
      await copyFile(realIndex, working);
    } catch (error) {
      if (errnoOf(error) !== "ENOENT") throw error; // a repository without an index yet: start empty
    }
    const env = { GIT_INDEX_FILE: working, ...CAESAR_GIT_IDENTITY };
    // A submodule (a gitlink in the index) keeps the commit the index records: `git add` would otherwise
    // run `git status` inside it, under the configuration of a repository the agent controls.
    const gitlinks = await gitlinksOf(workdir, env);
    const args = ["add", "--all", "--", ":(top)", ...exclusionPathspecs([...excluded, ...gitlinks])];
    // A file that vanishes between git's listing and its reading (an agent's temporary file, in place)
    // fails `git add`: the next attempt sees the tree without it. The last attempt's failure is the error.
    let added = false;
    for (let attempt = 1; attempt < ADD_ATTEMPTS && !added; attempt++) {
      const result = await git(workdir, args, { env, allowFailure: true });
      added = result.code === 0;
      if (!added && !VANISHED.test(result.stderr)) break;
    }
    if (!added) await git(workdir, args, { env });
    return await gitOut(workdir, ["write-tree"], { env });
  } finally {
    await rm(working, { force: true });
  }
}

/** The paths of the index's gitlinks (submodules, embedded repositories), from `git ls-files -s`. */
async function gitlinksOf(workdir: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const out = await gitOut(workdir, ["ls-files", "--stage", "-z"], { env });
  return out
    .split("\0")
    .filter((record) => record.startsWith("160000 "))
    .map((record) => record.slice(record.indexOf("\t") + 1));
}

/**
 * `:(exclude)` pathspecs for caesar's folders at any depth and for `excluded` paths (from the top), each as
 * itself and as a directory's contents. Each pattern starts with a glob character on purpose: git (2.39 at
 * least) fails `git add` with "paths are ignored" when an exclusion pathspec's literal prefix names an
 * ignored path, and a pattern with no literal prefix never does. A backslash makes the first character
 * literal again, so `\node_modules` still means exactly `node_modules`.
 */
export function exclusionPathspecs(excluded: readonly string[]): string[] {
  const patterns = [
    ...CAESAR_OWN_PATHS.map((path) => `**/${path}`),
    ...excluded.map((path) => literalFirst(escapeGlob(path.replace(/\/+$/, "")))),
  ];
  return patterns.flatMap((pattern) => [`:(top,exclude,glob)${pattern}`, `:(top,exclude,glob)${pattern}/**`]);
}

/** Make the pattern start with a backslash (escaping its first character) unless it already does. */
function literalFirst(escaped: string): string {
  return escaped.startsWith("\\") ? escaped : `\\${escaped}`;
}

function escapeGlob(path: string): string {
  return path.replace(/[*?[\]\\]/g, (char) => `\\${char}`);
}
