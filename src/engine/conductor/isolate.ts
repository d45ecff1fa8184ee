import { join } from "node:path";
import { OutputTail } from "../../support/output-tail.js";
import { gitOut } from "../../workspace/git.js";
import { materialise } from "../../workspace/materialise.js";
import { snapshotTree } from "../../workspace/snapshot.js";
import { addWorktree, branchNameFor, removeWorktree } from "../../workspace/worktree.js";
import { projectPaths } from "../store/project.js";
import type { TaskPlan } from "../store/task-plan.js";
import { startGroupProcess } from "./group-process.js";

export interface Isolation {
  workspace: string;
  worktree: string | null;
  branch: string | null;
  baseRef: string | null;
  /** The top of the git work tree the agent works in (the worktree, or the repository), if any. */
  gitTop: string | null;
  /** The tree the task starts from: the base commit's for a fresh worktree, a snapshot in place. */
  startTree: string | null;
  materialised: string[];
  linked: string[];
  missing: string[];
}

/**
 * Where a task's worktree and branch will be, when it gets one: known before they exist, so that the
 * state names them first and a conductor dying half way through `git worktree add` leaves nothing that
 * `caesar gc` cannot find.
 */
export function plannedWorktree(plan: TaskPlan, taskId: string): { path: string; branch: string } | null {
  if (plan.isolation === "inplace" || plan.repo_top === null) return null;
  return {
    path: join(projectPaths(plan.root).worktrees, taskId),
    branch: branchNameFor(plan.role ?? plan.agent, plan.objective, taskId),
  };
}

/** Prepare where the agent works: a fresh worktree on a readable branch, or the project itself. */
export async function isolate(plan: TaskPlan, taskId: string): Promise<Isolation> {
  if (plan.isolation === "inplace" || plan.repo_top === null) {
    const baseRef = plan.repo_top
      ? await gitOut(plan.root, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]).catch(() => "")
      : "";
    // In place, the user's uncommitted work is part of the starting point, never of the task's changes.
    const startTree = plan.repo_top ? await snapshotTree(plan.repo_top) : null;
    return {
      // In place means in the caller's workspace: the project, or (for a nested task) its parent's worktree.
      workspace: plan.repo_top ? join(plan.repo_top, plan.repo_prefix) : plan.root,
      worktree: null,
      branch: null,
      baseRef: baseRef || null,
      gitTop: plan.repo_top,
      startTree,
      materialised: [],
      linked: [],
      missing: [],
    };
  }
  // A planned base (a task sent by another machine) is frozen in the plan; otherwise the HEAD of now.
  const base = plan.base_commit ?? "HEAD";
  const [baseRef, baseTree] = (
    await gitOut(plan.repo_top, ["rev-parse", `${base}^{commit}`, `${base}^{tree}`])
  ).split("\n") as [string, string];
  const { path, branch } = plannedWorktree(plan, taskId)!;
  await addWorktree(plan.repo_top, path, branch, baseRef);
  const workspace = join(path, plan.repo_prefix);
  try {
    const placed = await materialise(plan.root, workspace, plan.worktree);
    const prefixed = (paths: string[]) =>
      paths.map((p) => (plan.repo_prefix ? join(plan.repo_prefix, p) : p));
    return {
      workspace,
      worktree: path,
      branch,
      baseRef,
      gitTop: path,
      // A fresh checkout of the base: materialised paths are excluded from every snapshot anyway.
      startTree: baseTree,
      materialised: prefixed(placed.materialised),
      linked: prefixed(placed.linked),
      missing: placed.missing,
    };
  } catch (error) {
    await removeWorktree(plan.repo_top, path, branch);
    throw error;
  }
}

/** Undo a worktree that never ran an agent (a failed setup): nothing of the user's is in it. */
export async function discardIsolation(plan: TaskPlan, isolation: Isolation): Promise<void> {
  if (isolation.worktree && plan.repo_top)
    await removeWorktree(plan.repo_top, isolation.worktree, isolation.branch);
}

export interface SetupFailure {
  command: string;
  code: number | null;
  signal: string | null;
  /** The last lines the failing command printed (all of it is in raw.log). */
  output: string;
}

/**
 * Run the `[worktree] setup` commands in the workspace, output into raw.log; the first failure stops.
 * Each runs in a process group of its own, recorded (`onProcess`) so that whoever takes the task over
 * stops it, until `deadlineAt` at the latest, and is stopped by the same terminate sequence as agents and
 * checks (SIGTERM, a grace, SIGKILL) when the task is cancelled.
 */
export async function runSetup(
  commands: string[],
  cwd: string,
  env: Record<string, string>,
  raw: { write(chunk: string | Buffer): unknown },
  signal: AbortSignal,
  options: { deadlineAt: number; onProcess?: (pid: number | null) => Promise<void> },
): Promise<SetupFailure | undefined> {
  for (const command of commands) {
    raw.write(`[caesar] setup: $ ${command}\n`);
    const output = new OutputTail();
    const child = startGroupProcess({
      bin: "sh",
      args: ["-c", command],
      cwd,
      env,
      raw: {
        write: (chunk: string) => {
          raw.write(chunk);
          output.pushText(chunk);
        },
      },
      onStdoutLine: () => {},
      onStderrLine: () => {},
    });
    if (child.pid !== undefined) await options.onProcess?.(child.pid);
    let timedOut = false;
    const timer = setTimeout(
      () => {
        timedOut = true;
        void child.terminate();
      },
      Math.max(0, options.deadlineAt - Date.now()),
    );
    const stop = () => void child.terminate();
    signal.addEventListener("abort", stop, { once: true });
    if (signal.aborted) stop();
    const exit = await child.done;
    clearTimeout(timer);
    signal.removeEventListener("abort", stop);
    if (child.pid !== undefined) await options.onProcess?.(null);
    if (exit.spawnError) return { command, code: 127, signal: null, output: exit.spawnError.message };
    if (timedOut) {
      raw.write(`[caesar] setup: \`${command}\` was stopped at the task's deadline\n`);
      return { command, code: exit.code, signal: exit.signal ?? "SIGTERM", output: output.text };
    }
    if (exit.code !== 0) return { command, code: exit.code, signal: exit.signal, output: output.text };
  }
  return undefined;
}
