import { mkdir, readFile, rename } from "node:fs/promises";
import { join } from "node:path";
import type { AgentAdapter, LaunchContext, StreamOutcome } from "../../agents/adapter.js";
import type { Attempt, AttemptKind, CheckResult } from "../../protocol/checks.js";
import type { Finding, Usage } from "../../protocol/report.js";
import { taskPaths } from "../../protocol/task-dir.js";
import { writeJsonAtomic } from "../../support/atomic-file.js";
import { errnoOf } from "../../support/errors.js";
import { recordProcess } from "../../support/process.js";
import { changedFiles, diffText } from "../../workspace/changes.js";
import { snapshotTree } from "../../workspace/snapshot.js";
import type { EventWriter } from "../store/event-log.js";
import type { TaskPlan } from "../store/task-plan.js";
import { readState, updateState } from "../store/task-store.js";
import { checksNotRun, runChecks } from "./checks.js";
import type { Ending } from "./ending.js";
import type { FinishInput } from "./finish.js";
import { makeFollowUpPrompt, makeFreshBrief } from "./follow-up.js";
import { agentOutputDir } from "./output-dir.js";
import type { RawLog } from "./raw-log.js";
import { CHANNEL_REPORT_FILE } from "./recover.js";
import { adoptSandboxCommits } from "./sandbox-commits.js";
import { type EgressDoor, sandboxCommand } from "./sandbox-run.js";
import { pointerFindings } from "./worktree-pointer.js";

/** How one run of the agent ended: it exited (or was stopped), or it could not start. */
export type AgentTurn =
  | {
      kind: "exited";
      stream: StreamOutcome;
      /** How this run ended, in words (ending.ts). */
      ending: Ending;
      startedAt: string;
      finishedAt: string;
      /** The task's deadline (epoch ms), fixed by the first run. */
      deadlineAt: number;
      /** Where this run's output begins in raw.log. */
      rawFrom: number;
    }
  | { kind: "error"; ending: Ending };

/**
 * Where the attempts stand, written before each run of the agent starts: which run it is and how it was
 * launched, what the runs before it found, and where its output begins in raw.log. A conductor taking the
 * task over (the service restarted) continues the loop from here.
 */
export interface AttemptsProgress {
  turn: number;
  how: AttemptKind;
  attempts: Attempt[];
  findings: Finding[];
  /** What every run so far spent, and what was spent before the current session began. */
  spent: Usage;
  before: Usage;
  raw_from: number;
}

export interface AttemptsInput {
  dir: string;
  plan: TaskPlan;
  adapter: AgentAdapter;
  events: EventWriter;
  raw: RawLog;
  cancel: AbortSignal;
  /** The first run's launch (its brief, its environment). */
  launch: LaunchContext;
  /** The git work tree the agent works in, and where the task started from (for a fresh run's diff). */
  git: { top: string | null; startTree: string | null; excluded: string[] };
  /** Run the agent once; `deadlineAt` is undefined for the first run, which fixes it. */
  runTurn(launch: LaunchContext, deadlineAt: number | undefined, turn: number): Promise<AgentTurn>;
  /** The task's egress proxy, when its sandbox has one: its checks reach what its agent reaches. */
  egress?: EgressDoor;
  /** Take over the run in progress when the previous conductor ended, instead of starting the first. */
  resume?: { progress: AttemptsProgress; adopt(turn: number, rawFrom: number): Promise<AgentTurn> };
  finish(input: Omit<FinishInput, "dir" | "plan" | "events" | "beforeFinalState">): Promise<unknown>;
}

/**
 * Run the agent, then the checks; while a check fails and attempts are left, give the same agent, in the
 * same workspace, another turn carrying the failing checks' output — its own session continued where its
 * CLI can, else a new run whose brief carries the previous diff and the failures — and check again. Every
 * attempt is recorded (events, report). Then finish the task with the last attempt.
 */
export async function conductAttempts(input: AttemptsInput): Promise<void> {
  const { plan, dir, events } = input;
  const progress: AttemptsProgress = input.resume?.progress ?? {
    turn: 1,
    how: "first",
    attempts: [],
    findings: [],
    spent: {},
    before: {},
    raw_from: 0,
  };
  const { attempts, findings } = progress;
  let launch = input.launch;
  let deadlineAt: number | undefined;
  let adopting = input.resume !== undefined;
  for (;;) {
    const number = progress.turn;
    let turn: AgentTurn;
    if (adopting && input.resume) {
      adopting = false;
      turn = await input.resume.adopt(number, progress.raw_from);
    } else {
      progress.raw_from = await input.raw.written();
      await writeProgress(dir, progress);
      turn = await input.runTurn(launch, deadlineAt, number);
    }
    if (turn.kind === "error") {
      await input.finish({ stream: {}, ending: turn.ending, attempts, findings });
      return;
    }
    deadlineAt = turn.deadlineAt;
    // What every attempt spent, not only the last: the budget is charged from it. `before` is what was
    // spent before the current session began (a CLI may report a continued session's usage as a whole).
    if (progress.how !== "resumed") progress.before = progress.spent;
    progress.spent = turn.stream.usageCoversSession
      ? addUsage(progress.before, turn.stream.usage)
      : addUsage(progress.spent, turn.stream.usage);
    const checks = await checkTurn(input, turn, number, findings);
    const passed = plan.checks.length === 0 ? null : checks.every((check) => check.passed);
    attempts.push({
      attempt: number,
      how: progress.how,
      session: turn.stream.session ?? null,
      started_at: turn.startedAt,
      finished_at: turn.finishedAt,
      outcome: turn.ending.outcome,
      exit_code: turn.ending.exit.code,
      checks,
      checks_passed: passed,
    });
    const another =
      passed === false &&
      number < plan.attempts &&
      turn.ending.outcome === "succeeded" &&
      !input.cancel.aborted &&
      deadlineAt > Date.now();
    if (!another) {
      const spent = progress.spent;
      await input.finish({
        stream: Object.keys(spent).length > 0 ? { ...turn.stream, usage: spent } : turn.stream,
        ending: turn.ending,
        checks,
        attempts,
        findings,
        rawFrom: turn.rawFrom,
      });
      return;
    }
    await setAside(dir, number);
    const next = await nextLaunch(input, turn, checks, number + 1);
    launch = next.launch;
    progress.how = next.how;
    progress.turn = number + 1;
    const failed = checks.filter((check) => !check.passed).length;
    const message =
      next.how === "resumed"
        ? `attempt ${number + 1} of ${plan.attempts}: ${failed} check(s) failed; continuing ${plan.agent}'s session ${turn.stream.session} with their output`
        : `attempt ${number + 1} of ${plan.attempts}: ${failed} check(s) failed; a new run of ${plan.agent} gets the diff so far and their output`;
    input.raw.write(`\n[caesar] ${message}\n`);
    await events.append({ type: "progress", message });
  }
}

const PROGRESS_FILE = "attempts.json";

async function writeProgress(dir: string, progress: AttemptsProgress): Promise<void> {
  const folder = agentOutputDir(dir);
  await mkdir(folder, { recursive: true, mode: 0o700 });
  await writeJsonAtomic(join(folder, PROGRESS_FILE), progress);
}

/** The attempts' progress a conductor left (none: the first run had not started). */
export async function readProgress(dir: string): Promise<AttemptsProgress | undefined> {
  try {
    return JSON.parse(await readFile(join(agentOutputDir(dir), PROGRESS_FILE), "utf8")) as AttemptsProgress;
  } catch {
    return undefined;
  }
}

function addUsage(total: Usage, more: Usage | undefined): Usage {
  if (!more) return total;
  const sum = { ...total };
  for (const key of ["input_tokens", "output_tokens", "duration_ms", "cost_usd"] as const) {
    if (more[key] !== undefined) sum[key] = (sum[key] ?? 0) + more[key];
  }
  return sum;
}

async function checkTurn(
  input: AttemptsInput,
  turn: Extract<AgentTurn, { kind: "exited" }>,
  attempt: number,
  findings: Finding[],
): Promise<CheckResult[]> {
  const { plan, dir } = input;
  if (plan.checks.length === 0) return [];
  if (turn.ending.outcome === "cancelled" || input.cancel.aborted)
    return checksNotRun(plan.checks, "not run: the task was cancelled");
  if (turn.ending.outcome === "timed_out")
    return checksNotRun(plan.checks, "not run: the task's deadline had passed");
  // A check that runs git in the worktree must not run the agent's git configuration.
  findings.push(...(await pointerFindings(input.launch.task.workspace, dir)));
  // What a sandboxed agent committed is in the project's store before anything is snapshotted.
  const state = await readState(dir);
  findings.push(...(await adoptSandboxCommits(plan, state)));
  // A check runs what the agent wrote: in the task's sandbox, writing its worktree (a build, a coverage
  // report), or — in place — only what the task's mode lets its agent write.
  const checkPlan: TaskPlan = { ...plan, mode: state.worktree ? "write" : plan.mode };
  const wrap = plan.sandbox.backend
    ? (bin: string, args: string[], env: Record<string, string>) =>
        sandboxCommand(checkPlan, state, dir, { bin, args, cwd: state.workspace }, env, {
          egress: input.egress,
          // Its agent's keys, masked wherever they are in the check's environment too.
          keysFrom: input.launch.env,
        })
    : undefined;
  // Checks run in the agent's workspace: what they change there (outside .gitignore) is said, not hidden.
  const before = await snapshotOf(input);
  const results = await runChecks({
    checks: plan.checks,
    attempt,
    workspace: input.launch.task.workspace,
    taskDir: dir,
    checkTimeoutMs: plan.check_timeout_ms,
    deadlineAt: turn.deadlineAt,
    events: input.events,
    signal: input.cancel,
    // The environment of the command that asked for the task (its PATH, its variables), as its agent's:
    // not the service's, which another shell started.
    env: input.launch.env,
    ...(wrap ? { wrap } : {}),
    onProcess: async (pid) => {
      await updateState(dir, (state) => ({
        ...state,
        check_process: pid === null ? null : recordProcess(pid),
      }));
    },
  });
  const after = before === undefined ? undefined : await snapshotOf(input);
  if (before !== undefined && after !== undefined && after !== before) {
    const changed = await changedFiles(input.git.top!, before, after).catch(() => []);
    if (changed.length > 0) {
      findings.push({
        severity: "medium",
        title: `The checks of attempt ${attempt} changed ${changed.length} file(s) in the workspace; they are part of the diff`,
        detail: changed
          .slice(0, 20)
          .map((change) => `${change.action} ${change.path}`)
          .join("\n"),
      });
    }
  }
  return results;
}

async function snapshotOf(input: AttemptsInput): Promise<string | undefined> {
  const { top, excluded } = input.git;
  return top ? snapshotTree(top, excluded).catch(() => undefined) : undefined;
}

/** The next attempt's launch: the agent's own session continued, or a new run with the evidence. */
async function nextLaunch(
  input: AttemptsInput,
  turn: Extract<AgentTurn, { kind: "exited" }>,
  checks: CheckResult[],
  attempt: number,
): Promise<{ launch: LaunchContext; how: AttemptKind }> {
  const { plan, adapter } = input;
  const base = input.launch;
  const followUp = {
    attempt,
    attempts: plan.attempts,
    checks,
    workspace: base.task.workspace,
    reportPath: base.paths.report,
  };
  const session = turn.stream.session;
  if (plan.follow_up === "resume" && adapter.capabilities.resume.value && session) {
    return { launch: { ...base, prompt: makeFollowUpPrompt(followUp), resume: session }, how: "resumed" };
  }
  const diff = await diffSoFar(input).catch(() => "");
  return {
    launch: { ...base, prompt: makeFreshBrief({ ...followUp, brief: base.prompt, diff }) },
    how: "fresh",
  };
}

/** The workspace's changes against the task's starting point, as a patch. */
async function diffSoFar(input: AttemptsInput): Promise<string> {
  const { top, startTree, excluded } = input.git;
  if (!top || !startTree) return "";
  const tree = await snapshotTree(top, excluded);
  return tree === startTree ? "" : diffText(top, startTree, tree);
}

/**
 * Move the attempt's report files to `attempts/<n>/` in the task directory: the next attempt's report is
 * recovered from what it writes itself, never from an earlier one's.
 */
async function setAside(dir: string, attempt: number): Promise<void> {
  const kept = join(dir, "attempts", String(attempt));
  await mkdir(kept, { recursive: true });
  for (const file of [taskPaths(dir).report, join(dir, CHANNEL_REPORT_FILE)]) {
    await rename(file, join(kept, file.slice(file.lastIndexOf("/") + 1))).catch((error: unknown) => {
      if (errnoOf(error) !== "ENOENT") throw error;
    });
  }
}
