import { copyFile, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { errnoOf } from "../support/errors.js";
import { randomHex } from "../support/random.js";
import { CAESAR_GIT_IDENTITY, git, gitOut } from "./git.js";

/** caesar's own folders, never part of a task's changes. */
export const CAESAR_OWN_PATHS = [".caesar/tasks", ".caesar/wt", ".caesar/state", ".caesar/chat"];

/**
 * The index file of the work tree whose top is `workdir`: `.git/index`, or for a linked worktree the
 * `index` of the git dir its `.git` file points to. Read directly (one process less per snapshot); git is
 * asked only for layouts this does not recognise.
 */
async function indexPath(workdir: string): Promise<string> {
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
 */
export async function snapshotTree(workdir: string, excluded: readonly string[] = []): Promise<string> {
  const realIndex = await indexPath(workdir);
  const tag = `${process.pid}-${randomHex(6)}`;
  const original = join(tmpdir(), `caesar-index-${tag}.orig`);
  const working = join(tmpdir(), `caesar-index-${tag}`);
  try {
    try {
      await copyFile(realIndex, original);
      await copyFile(realIndex, working);
    } catch (error) {
      if (errnoOf(error) !== "ENOENT") throw error; // a repository without an index yet: start empty
    }
    const env = { GIT_INDEX_FILE: working, ...CAESAR_GIT_IDENTITY };
    await git(workdir, ["add", "--all", "--", ":(top)"], { env });
    const paths = [...CAESAR_OWN_PATHS, ...excluded].map((path) => `:(top,literal)${path}`);
    // Put the excluded paths back as the index had them (git refuses exclusion pathspecs on ignored paths).
    const kept = (
      await git(workdir, ["ls-files", "--stage", "-z", "--", ...paths], { env: { GIT_INDEX_FILE: original } })
    ).stdout;
    await git(workdir, ["rm", "--cached", "-r", "-q", "--ignore-unmatch", "--", ...paths], { env });
    if (kept !== "") await git(workdir, ["update-index", "-z", "--index-info"], { env, input: kept });
    return await gitOut(workdir, ["write-tree"], { env });
  } finally {
    await rm(original, { force: true });
    await rm(working, { force: true });
  }
}
