import { spawn } from "node:child_process";
import { lstat, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { messageOf } from "../support/errors.js";
import { git, gitOut } from "./git.js";
import { pinnedWorktreeOf } from "./pinned-worktree.js";

/**
 * Commits in a sandboxed worktree task. Inside caesar's OS sandbox the project's object store and refs
 * are read-only (an agent able to write them could rewrite the repository's history or move `main`), so
 * the agent's git writes its objects to a folder of its own — `<common dir>/worktrees/<name>/caesar-objects`,
 * inside its worktree's registration, which the sandbox binds writable — with the project's objects as
 * alternates, and its worktree's HEAD is detached, so that a commit moves only that HEAD.
 *
 * After each run of the agent, caesar adopts what it committed: the objects of that folder are packed and
 * indexed into the project's store by `git index-pack --strict` (every object hashed again from its content
 * and checked, its links resolved), never copied as files; then the task's branch is moved to the agent's
 * HEAD when that is a commit descending from the task's base. Nothing depends on the agent keeping the
 * GIT_* variables: without them its commit only fails (read-only store).
 */
const TASK_OBJECTS = "caesar-objects";

export interface TaskGit {
  /** The worktree's registration (`<common>/worktrees/<name>`). */
  registration: string;
  objects: string;
  /** The project's object store (`<common>/objects`). */
  common: string;
}

/** The registration, objects folder and common store of a task worktree (from caesar's record, not `.git`). */
export function taskGitOf(worktree: string): TaskGit | undefined {
  const pinned = pinnedWorktreeOf(worktree);
  if (!pinned) return undefined;
  const commonDir = dirname(dirname(pinned.gitDir));
  return {
    registration: pinned.gitDir,
    objects: join(pinned.gitDir, TASK_OBJECTS),
    common: commonDir,
  };
}

/**
 * Before a sandboxed run: the objects folder made, HEAD detached at the commit it is on. Returns the
 * variables that point the agent's git there.
 */
export async function prepareTaskCommits(worktree: string): Promise<Record<string, string>> {
  const task = taskGitOf(worktree);
  if (!task) return {};
  // One git: update-ref resolves `HEAD^{commit}` itself (and fails, as rev-parse --verify did, when HEAD
  // is no commit), while the folder is made.
  await Promise.all([
    mkdir(task.objects, { recursive: true, mode: 0o700 }),
    git(worktree, [
      "update-ref",
      "--no-deref",
      "-m",
      "caesar: detached for the sandbox",
      "HEAD",
      "HEAD^{commit}",
    ]),
  ]);
  return {
    GIT_OBJECT_DIRECTORY: task.objects,
    GIT_ALTERNATE_OBJECT_DIRECTORIES: join(task.common, "objects"),
  };
}

export type Adoption =
  | { kind: "none" }
  | { kind: "adopted"; head: string; objects: number; branchMoved: boolean }
  | { kind: "refused"; why: string };

const OBJECT_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/**
 * After a sandboxed run: take the agent's objects into the project's store, validated, and its commit as
 * the task branch's. Whatever cannot be adopted is refused: HEAD goes back to `base` and the index is
 * dropped, so that caesar observes the change from the files alone (never from objects it did not check).
 */
export async function adoptTaskCommits(
  worktree: string,
  base: string,
  branch: string | null,
): Promise<Adoption> {
  const task = taskGitOf(worktree);
  if (!task) return { kind: "none" };
  const ids = await listTaskObjects(task).catch((error) => ({ error: messageOf(error) }));
  if ("error" in ids) return refuse(task, base, ids.error);
  const headText = await readFile(join(task.registration, "HEAD"), "utf8").catch(() => "");
  const head = headText.trim();
  if (ids.list.length === 0) {
    if (head === base || head.startsWith("ref: ")) return { kind: "none" };
    if (!OBJECT_ID.test(head)) return refuse(task, base, "its HEAD is not a commit");
  }
  if (ids.list.length > 0) {
    const indexed = await packInto(task, ids.list);
    if (indexed) return refuse(task, base, indexed);
  }
  if (!OBJECT_ID.test(head)) {
    // Objects (staged files) but no commit of its own on a detached HEAD: nothing to move.
    await emptyObjects(task);
    return { kind: "adopted", head: base, objects: ids.list.length, branchMoved: false };
  }
  const inCommon = { GIT_DIR: task.common };
  const isCommit = await git(task.common, ["cat-file", "-e", `${head}^{commit}`], {
    env: inCommon,
    allowFailure: true,
  });
  if (isCommit.code !== 0) return refuse(task, base, `its HEAD ${head} is not a commit it made`);
  const descends = await git(task.common, ["merge-base", "--is-ancestor", base, head], {
    env: inCommon,
    allowFailure: true,
  });
  let branchMoved = false;
  if (descends.code === 0 && branch) {
    const moved = await git(
      task.common,
      ["update-ref", "-m", "caesar: the agent's commits", `refs/heads/${branch}`, head],
      {
        env: inCommon,
        allowFailure: true,
      },
    );
    branchMoved = moved.code === 0;
  }
  // Adopted: the folder starts empty for the next run (what is in the store stays reachable from the branch).
  await emptyObjects(task);
  return { kind: "adopted", head, objects: ids.list.length, branchMoved };
}

/**
 * The ids of the objects in the task's folder — only there: no alternates (a file of the agent's naming
 * other stores is refused), no link anywhere in it (a link would have caesar read what the sandbox hides).
 */
async function listTaskObjects(task: TaskGit): Promise<{ list: string[] }> {
  // No file at all (the agent committed nothing, most runs): no object either, and no git to ask.
  if ((await assertPlainTree(task.objects, 0)) === 0) return { list: [] };
  const out = await gitOut(task.common, ["cat-file", "--batch-all-objects", "--batch-check=%(objectname)"], {
    env: { GIT_DIR: task.common, GIT_OBJECT_DIRECTORY: task.objects, GIT_ALTERNATE_OBJECT_DIRECTORIES: "" },
  });
  return { list: out.split("\n").filter((line) => OBJECT_ID.test(line)) };
}

/** Throws unless `dir` is a plain tree of folders and regular files; the number of its files. */
async function assertPlainTree(dir: string, depth: number): Promise<number> {
  let files = 0;
  const info = await lstat(dir);
  if (!info.isDirectory()) throw new Error(`${dir} is not a plain folder`);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (depth === 0 && entry.name === "info") {
      for (const name of await readdir(path)) {
        if (name === "alternates" || name === "http-alternates")
          throw new Error(`${join(path, name)} names other object stores`);
      }
    }
    if (entry.isSymbolicLink()) throw new Error(`${path} is a link`);
    if (entry.isDirectory()) {
      if (depth >= 2) throw new Error(`${path} is deeper than an object store goes`);
      files += await assertPlainTree(path, depth + 1);
    } else if (!entry.isFile()) throw new Error(`${path} is not a regular file`);
    else files++;
  }
  return files;
}

/** `git pack-objects` from the task's folder into `git index-pack --strict` in the project's store. */
function packInto(task: TaskGit, ids: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    const base = { ...process.env, GIT_TERMINAL_PROMPT: "0", LC_ALL: "C", GIT_DIR: task.common };
    const pack = spawn("git", ["pack-objects", "--stdout", "-q"], {
      cwd: task.common,
      env: {
        ...base,
        GIT_OBJECT_DIRECTORY: task.objects,
        GIT_ALTERNATE_OBJECT_DIRECTORIES: join(task.common, "objects"),
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const index = spawn("git", ["index-pack", "--stdin", "--strict"], {
      cwd: task.common,
      env: { ...base, GIT_OBJECT_DIRECTORY: undefined, GIT_ALTERNATE_OBJECT_DIRECTORIES: undefined },
      stdio: ["pipe", "ignore", "pipe"],
    });
    let errors = "";
    pack.stderr.on("data", (chunk: Buffer) => {
      errors += chunk.toString();
    });
    index.stderr.on("data", (chunk: Buffer) => {
      errors += chunk.toString();
    });
    pack.stdout.pipe(index.stdin);
    pack.stdin.end(`${ids.join("\n")}\n`);
    const closed = (child: typeof pack | typeof index) =>
      new Promise<number | string | null>((done) => {
        child.on("error", (error) => done(messageOf(error)));
        child.on("close", (code) => done(code));
      });
    void Promise.all([closed(pack), closed(index)]).then(([packed, indexed]) => {
      if (packed === 0 && indexed === 0) resolve(undefined);
      else
        resolve(`its objects did not pass git's checks: ${errors.trim().split("\n").slice(-3).join("; ")}`);
    });
  });
}

/** Nothing of the agent's git is taken: HEAD back to the base, the index dropped, the folder emptied. */
async function refuse(task: TaskGit, base: string, why: string): Promise<Adoption> {
  // Removed, then made anew: a link the agent left in their place is never followed.
  await rm(join(task.registration, "index"), { force: true });
  await rm(join(task.registration, "HEAD"), { force: true });
  await writeFile(join(task.registration, "HEAD"), `${base}\n`, { flag: "wx", mode: 0o600 });
  await emptyObjects(task);
  return { kind: "refused", why };
}

/** The task's objects folder emptied for its next run (removed and made anew: a link in it is never followed). */
async function emptyObjects(task: TaskGit): Promise<void> {
  await rm(task.objects, { recursive: true, force: true });
  await mkdir(task.objects, { recursive: true, mode: 0o700 });
}
