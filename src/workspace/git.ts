import { execFile } from "node:child_process";
import { CaesarError } from "../support/errors.js";
import { type PinnedWorktree, pinnedWorktreeOf } from "./pinned-worktree.js";

export interface GitOptions {
  env?: NodeJS.ProcessEnv;
  input?: string;
  /** Resolve with the result instead of throwing on a non-zero exit. */
  allowFailure?: boolean;
  maxBuffer?: number;
}

export interface GitResult {
  stdout: string;
  stderr: string;
  code: number;
}

/** Identity for the commits caesar itself makes (task snapshots), so it works where none is configured. */
export const CAESAR_GIT_IDENTITY = {
  GIT_AUTHOR_NAME: "caesar",
  GIT_AUTHOR_EMAIL: "caesar@localhost",
  GIT_COMMITTER_NAME: "caesar",
  GIT_COMMITTER_EMAIL: "caesar@localhost",
};

/** Run git in `cwd`. Failures become a CaesarError carrying git's own message. */
export function git(cwd: string, args: string[], options: GitOptions = {}): Promise<GitResult> {
  // In a task's worktree, git is told its registered git dir: the worktree's `.git` file is the agent's.
  let pinned: PinnedWorktree | undefined;
  try {
    pinned = pinnedWorktreeOf(cwd);
  } catch (error) {
    if (!options.allowFailure) return Promise.reject(error);
    return Promise.resolve({ stdout: "", stderr: (error as Error).message, code: 128 });
  }
  // No file-system monitor either: a hook that a configuration inside the worktree (a submodule's) could
  // name; this setting reaches the git processes git itself starts.
  const worktree = pinned
    ? { GIT_DIR: pinned.gitDir, GIT_WORK_TREE: pinned.top, ...withConfig("core.fsmonitor", "false") }
    : {};
  return new Promise((resolve, reject) => {
    const child = execFile(
      "git",
      args,
      {
        cwd,
        env: { ...process.env, GIT_TERMINAL_PROMPT: "0", LC_ALL: "C", ...worktree, ...options.env },
        maxBuffer: options.maxBuffer ?? 256 * 1024 * 1024,
        encoding: "utf8",
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : 1) : 0;
        if (error && (error as NodeJS.ErrnoException).code === "ENOENT") {
          reject(
            new CaesarError("git_missing", "git is not installed or not on PATH.", {
              detail: "Install git (https://git-scm.com) and retry.",
            }),
          );
          return;
        }
        if (code !== 0 && !options.allowFailure) {
          reject(
            new CaesarError("git_failed", `git ${args[0]} failed in ${cwd}.`, {
              detail: `${stderr.trim() || stdout.trim()}\n(command: git ${args.join(" ")})`,
              data: { code },
            }),
          );
          return;
        }
        resolve({ stdout, stderr, code });
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

/** One more `GIT_CONFIG_KEY_<n>`/`VALUE_<n>` pair after those already in the environment (CI systems set some). */
function withConfig(key: string, value: string): NodeJS.ProcessEnv {
  const count = Number.parseInt(process.env.GIT_CONFIG_COUNT ?? "0", 10);
  const n = Number.isSafeInteger(count) && count > 0 ? count : 0;
  return { GIT_CONFIG_COUNT: String(n + 1), [`GIT_CONFIG_KEY_${n}`]: key, [`GIT_CONFIG_VALUE_${n}`]: value };
}

export async function gitOut(cwd: string, args: string[], options: GitOptions = {}): Promise<string> {
  return (await git(cwd, args, options)).stdout.trim();
}

/** The top level of the git work tree containing `dir`, or undefined outside git. */
export async function gitTopLevel(dir: string): Promise<string | undefined> {
  const result = await git(dir, ["rev-parse", "--show-toplevel"], { allowFailure: true });
  return result.code === 0 ? result.stdout.trim() : undefined;
}

/** The commit HEAD points at, or undefined in a repository without commits. */
export async function headCommit(dir: string): Promise<string | undefined> {
  const result = await git(dir, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], {
    allowFailure: true,
  });
  return result.code === 0 ? result.stdout.trim() : undefined;
}

/** What kind of git workspace `dir` is: none, a repository without commits, or a usable one (one git call). */
export async function describeRepository(
  dir: string,
): Promise<
  { kind: "none" } | { kind: "empty"; top: string } | { kind: "usable"; top: string; head: string }
> {
  const result = await git(dir, ["rev-parse", "--show-toplevel", "--verify", "--quiet", "HEAD^{commit}"], {
    allowFailure: true,
  });
  const [top, head] = result.stdout.trim().split("\n");
  if (!top || result.code > 1) return { kind: "none" };
  return result.code === 0 && head ? { kind: "usable", top, head } : { kind: "empty", top };
}
