import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { TASK_TOKEN_ENV } from "../../protocol/task-dir.js";
import { CONDUCTOR_MAIN } from "../../support/package-paths.js";
import { trace } from "../../support/trace.js";

/**
 * Node's flags for both processes of `caesar run` (the conductor gets them on its command line, the front
 * end sets them first thing): no optimising compiler. Both mostly wait — on the agent, on git, on the
 * task's files — and never run the hot loops that pay for TurboFan, whose first job alone costs ≈ 4 MiB
 * of peak memory (measured in docs/engine.md#performance). `CAESAR_NODE_FLAGS` replaces them
 * (space-separated; empty for none), to measure with and without.
 */
export function runNodeFlags(env: NodeJS.ProcessEnv = process.env): string[] {
  const custom = env.CAESAR_NODE_FLAGS;
  return custom === undefined ? ["--no-opt"] : custom.split(" ").filter(Boolean);
}

/** A conductor process started before its task exists, waiting on stdin to be told which task it owns. */
export interface PreparedConductor {
  readonly pid: number | undefined;
  /** Hand it its task: it starts conducting at once. */
  assign(root: string, taskId: string): void;
  /** No task after all (the request was refused): it exits without doing anything. */
  abandon(): void;
  /** How the process ended (observed while this process lives). */
  readonly exited: Promise<ConductorExit>;
}

export interface ConductorExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * Start a conductor ahead of time, so that loading Node and caesar's code overlaps with planning the task
 * in the front end (every `caesar run` needs two processes: this hides most of the second one's start-up).
 * It is detached from the start; if the front end dies before assigning a task, its stdin closes and it
 * exits.
 */
export function prepareConductor(root: string): PreparedConductor {
  if (early) {
    const prepared = early;
    early = undefined;
    return prepared;
  }
  const child: ChildProcess = spawn(process.execPath, [...runNodeFlags(), CONDUCTOR_MAIN, "--await-task"], {
    cwd: root,
    detached: true,
    stdio: ["pipe", "ignore", "ignore"],
    env: conductorEnvironment(),
  });
  trace("conductor spawned");
  child.unref();
  const exited = new Promise<ConductorExit>((resolve) => {
    child.on("error", () => resolve({ code: null, signal: null }));
    child.on("exit", (code, signal) => resolve({ code, signal }));
  });
  child.stdin?.on("error", () => {});
  let done = false;
  return {
    pid: child.pid,
    exited,
    assign(taskRoot: string, taskId: string) {
      if (done) return;
      done = true;
      child.stdin?.end(`${JSON.stringify({ root: taskRoot, taskId })}\n`);
      (child.stdin as unknown as { unref?: () => void })?.unref?.();
    },
    abandon() {
      if (done) return;
      done = true;
      child.stdin?.end();
    },
  };
}

let early: PreparedConductor | undefined;

/**
 * For `caesar run`, start its conductor before anything else — before the command line is even parsed —
 * so that the conductor's start-up overlaps with all of the front end's work. `prepareConductor` then
 * hands this one out. A `run` that ends without a task (refused, --help, a usage error) closes its stdin
 * when it exits, and the conductor exits with it.
 */
export function prepareConductorEarly(argv: readonly string[]): void {
  if (argv[2] !== "run" || early) return;
  const own = argv.slice(3, argv.includes("--") ? argv.indexOf("--") : undefined);
  if (own.includes("--help") || own.includes("-h")) return;
  try {
    early = prepareConductor(process.cwd());
  } catch {
    // (a working directory that no longer exists, say): `run` prepares one later, or says what is wrong
  }
}

/** Start a conductor for an existing task, detached, its output in the task's conductor.log. */
export function launchConductor(root: string, taskId: string, logPath: string): number | undefined {
  const log = openSync(logPath, "a");
  try {
    const child = spawn(process.execPath, [...runNodeFlags(), CONDUCTOR_MAIN, root, taskId], {
      cwd: root,
      detached: true,
      stdio: ["ignore", log, log],
      env: conductorEnvironment(),
    });
    child.unref();
    child.on("error", () => {});
    return child.pid;
  } finally {
    closeSync(log);
  }
}

/**
 * A conductor's environment: the front end's, without the credentials of a task the front end may run
 * under (a nested `caesar run`). A child's agent can read its conductor's initial environment in /proc:
 * its parent's credentials must not be there.
 */
function conductorEnvironment(): NodeJS.ProcessEnv {
  if (process.env[TASK_TOKEN_ENV] === undefined) return process.env;
  const { [TASK_TOKEN_ENV]: _credentials, ...env } = process.env;
  return env;
}
