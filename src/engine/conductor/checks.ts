import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { CheckResult } from "../../protocol/checks.js";
import { formatDuration } from "../../support/duration.js";
import { isProviderCredential } from "../../support/provider-credentials.js";
import type { EventWriter } from "../store/event-log.js";
import type { PlannedCheck } from "../store/task-plan.js";
import { CheckOutput } from "./check-output.js";
import { startGroupProcess } from "./group-process.js";

/** Where the checks' logs go, in the task directory: `checks/<attempt>-<n>.log`. */
export const CHECKS_DIR = "checks";

export interface ChecksRun {
  checks: PlannedCheck[];
  attempt: number;
  workspace: string;
  taskDir: string;
  /** Each check's own deadline. */
  checkTimeoutMs: number;
  /** The task's deadline (epoch ms): no check runs past it. */
  deadlineAt: number;
  events: EventWriter;
  signal: AbortSignal;
  /** The running check's process (null once it ended), recorded so a finisher can stop it. */
  onProcess?(pid: number | null): Promise<void>;
  /** The environment to start from (default: this process's), before secrets are removed. */
  env?: NodeJS.ProcessEnv;
  /**
   * The command a check runs as, given `sh -c <check>` and its environment: in the task's OS sandbox when
   * it has one (a check runs what the agent wrote — `npm test`, `./ci.sh` — and must be no freer than it).
   */
  wrap?(
    bin: string,
    args: string[],
    env: Record<string, string>,
  ): {
    bin: string;
    args: string[];
    env: Record<string, string>;
  };
}

/**
 * Run the task's checks one after the other in its workspace — each with `sh -c` (inside the task's OS
 * sandbox when it has one: `wrap`), in a process group of its own, with its own deadline (never past the task's), without the model providers' credentials —
 * keeping each one's output in the task directory, bounded. Every check gets a result: one that could not
 * run says why.
 */
export async function runChecks(run: ChecksRun): Promise<CheckResult[]> {
  const dir = join(run.taskDir, CHECKS_DIR);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const env = checkEnvironment(run.env ?? process.env);
  const results: CheckResult[] = [];
  for (const [index, check] of run.checks.entries()) {
    const left = run.deadlineAt - Date.now();
    if (run.signal.aborted) {
      results.push(notRun(check, "not run: the task was cancelled"));
      continue;
    }
    if (left <= 0) {
      results.push(notRun(check, "not run: the task's deadline had passed"));
      continue;
    }
    const limit = Math.min(run.checkTimeoutMs, left);
    const log = `${CHECKS_DIR}/${run.attempt}-${index + 1}.log`;
    results.push(await runOne({ run, check, env, limit, log, id: `check-${run.attempt}-${index + 1}` }));
  }
  return results;
}

/** Results for checks that never ran (the agent timed out, was cancelled, or could not start). */
export function checksNotRun(checks: readonly PlannedCheck[], why: string): CheckResult[] {
  return checks.map((check) => notRun(check, why));
}

/**
 * A check's environment: this process's, without the variables that carry model providers' credentials
 * (a check runs the agent's code; it needs no model) and without any CAESAR_* variable (a check is not
 * an agent of the task).
 */
export function checkEnvironment(base: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined || name.startsWith("CAESAR_") || name === "AGENT_CHAT_ROOT") continue;
    if (isProviderCredential(name)) continue;
    env[name] = value;
  }
  return env;
}

function notRun(check: PlannedCheck, why: string): CheckResult {
  return {
    command: check.command,
    exit_code: null,
    duration_ms: 0,
    passed: false,
    output_tail: "",
    error: why,
    from: check.from,
  };
}

async function runOne(input: {
  run: ChecksRun;
  check: PlannedCheck;
  env: Record<string, string>;
  limit: number;
  log: string;
  id: string;
}): Promise<CheckResult> {
  const { run, check, limit, log, id } = input;
  const output = new CheckOutput(join(run.taskDir, log));
  await run.events.append({
    type: "tool_use",
    tool: "check",
    id,
    input_summary: check.command,
    status: "started",
  });
  const started = Date.now();
  const shell = ["/bin/sh", ["-c", check.command]] as const;
  const command = run.wrap
    ? run.wrap(shell[0], [...shell[1]], input.env)
    : { bin: shell[0], args: [...shell[1]], env: input.env };
  const child = startGroupProcess({
    bin: command.bin,
    args: command.args,
    cwd: run.workspace,
    env: command.env,
    raw: output,
    onStdoutLine: () => {},
    onStderrLine: () => {},
  });
  if (child.pid !== undefined) await run.onProcess?.(child.pid);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void child.terminate();
  }, limit);
  const onAbort = () => void child.terminate();
  run.signal.addEventListener("abort", onAbort, { once: true });
  const exit = await child.done;
  clearTimeout(timer);
  run.signal.removeEventListener("abort", onAbort);
  if (child.pid !== undefined) await run.onProcess?.(null);
  const duration = Date.now() - started;
  const tail = output.close();
  const cancelled = run.signal.aborted && !timedOut;
  const error = exit.spawnError
    ? `could not start: ${exit.spawnError.message}`
    : timedOut
      ? `killed at its deadline (${formatDuration(limit)})`
      : cancelled
        ? "stopped: the task was cancelled"
        : exit.signal
          ? `killed by ${exit.signal}`
          : undefined;
  const passed = exit.code === 0 && !timedOut && !cancelled && !exit.spawnError;
  await run.events.append({
    type: "tool_use",
    tool: "check",
    id,
    input_summary: check.command,
    status: passed ? "succeeded" : "failed",
    exit_code: exit.code,
    duration_ms: duration,
    output_summary: (error ?? lastLine(tail)).slice(0, 500),
  });
  return {
    command: check.command,
    exit_code: exit.code,
    duration_ms: duration,
    passed,
    output_tail: tail,
    ...(timedOut ? { timed_out: true } : {}),
    ...(error ? { error } : {}),
    output_bytes: output.bytes,
    log,
    from: check.from,
  };
}

function lastLine(text: string): string {
  const lines = text.trimEnd().split("\n");
  return lines[lines.length - 1] ?? "";
}
