import { rm } from "node:fs/promises";
import { dirname } from "node:path";
import type { AgentAdapter, StreamOutcome } from "../../agents/adapter.js";
import { findAdapter } from "../../agents/registry.js";
import { loadConfig } from "../../config/effective.js";
import { taskPaths } from "../../protocol/task-dir.js";
import { writeJsonAtomic } from "../../support/atomic-file.js";
import { diskFullError, messageOf } from "../../support/errors.js";
import { isProcessAlive, recordProcess } from "../../support/process.js";
import { trace } from "../../support/trace.js";
import { controlTaskPaths } from "../store/control.js";
import { EventWriter } from "../store/event-log.js";
import type { SlotHolder, TaskState } from "../store/state.js";
import { loadPlan, type TaskPlan } from "../store/task-plan.js";
import { readState, taskDirOf, updateState } from "../store/task-store.js";
import { agentFiles, readCursor } from "./agent-output.js";
import { isDirect } from "./agent-process.js";
import { adoptAgent, type Describe, runAgent, type TurnInput } from "./agent-turn.js";
import { type AttemptsProgress, conductAttempts, readProgress } from "./attempts.js";
import { brokerSocketOf } from "./broker-files.js";
import { describeEnding, type EndingCause, type EndingContext } from "./ending.js";
import { type FinishInput, finishTask } from "./finish.js";
import { discardIsolation, isolate, plannedWorktree, runSetup } from "./isolate.js";
import { agentOutputDir } from "./output-dir.js";
import { RawLog } from "./raw-log.js";
import type { EgressDoor } from "./sandbox-run.js";
import { takeTaskSlot } from "./slot-wait.js";
import { egressFolderOf, openEgress, type TaskEgress } from "./task-egress.js";
import { readTaskEnvironment, removeTaskEnvironment } from "./task-env.js";
import { agentEnvironment, makeLaunch, makeTask } from "./task-launch.js";
import { TaskTrace } from "./task-trace.js";
import { terminateGroup } from "./terminate.js";

/** What the conductor's host hands it from the rooms it may not import. */
export interface ConductorHooks {
  /** After the task's final state (a race contender settles its race here). */
  settled?(plan: TaskPlan, final: TaskState): Promise<void>;
}

/** Take one of the project's `[policy] max_parallel` slots; resolves with its release (the service's pool). */
export type TakeSlot = (
  taskId: string,
  plan: TaskPlan,
  /** `[policy] max_parallel` as the task's configuration says now. */
  max: number,
  onWait: (holders: SlotHolder[]) => Promise<void>,
  signal: AbortSignal,
  /** The task already holds a slot (it was running when its conductor changed): counted at once. */
  adopted?: boolean,
) => Promise<() => void>;

export interface ConductOptions extends ConductorHooks {
  /** Cancels the task: the agent's process group is ended and the task finished `cancelled`. */
  signal?: AbortSignal;
  /**
   * The environment the agent inherits (less a parent task's CAESAR_* variables). Default: the one its
   * front end recorded with the task (task-env.ts), else this process's.
   */
  env?: NodeJS.ProcessEnv;
  /** Where this task's diagnostics go (with CAESAR_TRACE=1, its phase timings); default stderr. */
  log?: (line: string) => void;
  /** How the task takes a slot; none: it runs at once (a cluster worker keeps its own cap). */
  takeSlot?: TakeSlot;
  /**
   * The task's previous conductor ended without finishing it: take its agent over where it stands (still
   * running, or ended since), start again a task whose agent never started, finish the rest.
   */
  adopt?: boolean;
  /** The task is this conductor's (its record names it): a front end waiting for that can go on. */
  onClaimed?(state: TaskState): void;
  /**
   * Open the sandboxed task's broker (the conductor service's) and say where its socket is: the agent's
   * one door to caesar from inside its sandbox. None: its nested requests have no way out.
   */
  openBroker?(taskId: string, dir: string, plan: TaskPlan): Promise<string>;
}

/**
 * The conductor: owns a task from its slot to its final state. It touches no process-wide state — its
 * cancel, its agent's environment and its diagnostics are given to it — so one process conducts many tasks
 * (the conductor service, a cluster worker). It never leaves a task "running": whatever happens, it writes
 * a final state — except when its own process ends, which the agent outlives: the next conductor adopts it.
 */
export async function conduct(root: string, taskId: string, options: ConductOptions = {}): Promise<void> {
  const dir = taskDirOf(root, taskId);
  const plan = await loadPlan(dir);
  const paths = taskPaths(dir);
  const events = new EventWriter(paths.events, taskId);
  const spans = new TaskTrace(plan, paths.events);
  const note = phaseNote(options.log);
  const cancel = new AbortController();
  const onCancel = () => cancel.abort(new Error("cancelled"));
  options.signal?.addEventListener("abort", onCancel, { once: true });
  if (options.signal?.aborted) onCancel();

  // The configuration loads while the state is written (its errors are thrown below, inside the try). Its
  // global layer is the one the task was planned with, never the one this process's environment names: the
  // service may have been started by a front end an agent ran, with an XDG_CONFIG_HOME of its choosing. (A
  // worker's plan records none: the worker's own configuration governs what it runs.)
  const configLoad = loadConfig(
    root,
    process.env,
    plan.global_config ? { globalPath: plan.global_config } : {},
  ).then(
    (config) => ({ config }),
    (error: unknown) => ({ error }),
  );
  const initial = await updateState(dir, (state) =>
    state.phase === "finished" ? undefined : { ...state, conductor: recordProcess(process.pid) },
  );
  note("conductor: state recorded");
  options.onClaimed?.(initial);
  if (initial.phase === "finished") return;
  if (initial.cancel_requested) cancel.abort(new Error("cancelled"));

  const resume = options.adopt ? await resumePoint(dir, plan, initial) : { kind: "start" as const };
  const raw = await RawLog.open(paths.raw, resume.kind === "adopt" ? resume.rawCut : undefined);
  let release: (() => void) | undefined;
  let egress: TaskEgress | undefined;
  let closed = false;
  // Release what the conductor holds before the final state is written (see finishTask).
  const closeUp = async () => {
    if (closed) return;
    closed = true;
    await raw.end();
    release?.();
  };
  const finish = async (input: Omit<FinishInput, "dir" | "plan" | "events" | "beforeFinalState">) => {
    const final = await spans.phase("caesar.finish", () =>
      finishTask({ dir, plan, events, ...input, beforeFinalState: closeUp }),
    );
    await spans.finished(final);
    // The task is over: no conductor takes it over now, its sockets' folders go (the egress proxy's and the
    // broker's; one of /tmp/caesar-<uid> for a project whose path is long).
    const socketFolders = () =>
      plan.sandbox.backend
        ? [egressFolderOf(root, taskId), dirname(brokerSocketOf(controlTaskPaths(root, taskId).dir))]
        : [];
    await Promise.all([
      rm(agentOutputDir(dir), { recursive: true, force: true }),
      removeTaskEnvironment(dir),
      Promise.resolve()
        .then(socketFolders)
        .then((folders) =>
          Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true }))),
        ),
    ]).catch(() => undefined);
    await options.settled?.(plan, final).catch(() => undefined);
    return final;
  };
  const describe: Describe = async (cause, context = {}) => {
    const state = await readState(dir).catch(() => undefined);
    return describeEnding(cause, {
      agent: plan.agent,
      timeoutMs: plan.timeout_ms,
      cancelledBy: state?.cancel_requested?.by,
      outputTail: "",
      ...context,
    });
  };
  const end: End = async (cause, context = {}, stream = {}) => {
    await finish({ stream, ending: await describe(cause, context) });
  };
  try {
    if (resume.kind === "finish") {
      await finishUnadoptable(initial, resume.why, describe, finish);
      return;
    }
    const loaded = await configLoad;
    if ("error" in loaded) throw loaded.error;
    const adapter = findAdapter(loaded.config, root, plan.agent);
    const maxParallel = loaded.config.policy.max_parallel.value;
    note("conductor: config loaded");
    const env = options.env ?? (await readTaskEnvironment(dir)) ?? process.env;
    const broker =
      plan.sandbox.backend && options.openBroker ? await options.openBroker(taskId, dir, plan) : undefined;
    egress = await openEgress(root, taskId, plan, events, options.log ?? (() => undefined), {
      product: adapter.product,
      env,
    });
    if (broker || egress) note("conductor: broker and egress open");
    const input: RunInput = {
      finish,
      describe,
      end,
      root,
      taskId,
      dir,
      plan,
      adapter,
      events,
      raw,
      cancel: cancel.signal,
      env,
      note,
      spans,
      ...(broker ? { broker } : {}),
      ...(egress ? { egress: egress.door } : {}),
    };
    if (resume.kind === "adopt") {
      release = await options.takeSlot?.(taskId, plan, maxParallel, async () => {}, cancel.signal, true);
      await continueTask(input, initial, resume.progress);
      return;
    }
    if (options.takeSlot) {
      release = await takeTaskSlot(options.takeSlot, {
        taskId,
        plan,
        max: maxParallel,
        dir,
        signal: cancel.signal,
        spans,
      });
      if (!release) {
        await end({ kind: "cancelled_before_start" });
        return;
      }
    }
    await runTask(input);
  } catch (error) {
    await finishAfterCrash(dir, end, error);
  } finally {
    egress?.close();
    await closeUp();
    options.signal?.removeEventListener("abort", onCancel);
  }
}

type Finish = (input: Omit<FinishInput, "dir" | "plan" | "events" | "beforeFinalState">) => Promise<unknown>;
/** Finish the task with an ending described from its cause: the one way a task ends. */
type End = (cause: EndingCause, context?: Partial<EndingContext>, stream?: StreamOutcome) => Promise<void>;

interface RunInput {
  finish: Finish;
  describe: Describe;
  end: End;
  root: string;
  taskId: string;
  dir: string;
  plan: TaskPlan;
  adapter: AgentAdapter;
  events: EventWriter;
  raw: RawLog;
  cancel: AbortSignal;
  env: NodeJS.ProcessEnv;
  note: (phase: string) => void;
  /** The task's spans (inert without telemetry). */
  spans: TaskTrace;
  /** The task's broker socket, when it has one (sandboxed, under the service). */
  broker?: string;
  /** The task's egress proxy, when its sandbox has one: its folder and the loopback ports it forwards. */
  egress?: EgressDoor;
}

async function runTask(input: RunInput): Promise<void> {
  const { dir, plan, raw, cancel, end, taskId } = input;
  const paths = taskPaths(dir);
  const planned = plannedWorktree(plan, taskId);
  const preparing = await updateState(dir, (state) => ({
    ...state,
    phase: "preparing",
    waiting_for_slot: null,
    ...(planned ? { worktree: planned.path, branch: planned.branch } : {}),
  }));
  if (cancel.aborted) {
    await end({ kind: "cancelled_before_start" });
    return;
  }

  const isolation = await input.spans.phase("caesar.isolate", () => isolate(plan, taskId), {
    "caesar.task.isolation": plan.isolation,
  });
  input.note("conductor: isolated");
  const task = makeTask(plan, preparing, dir, isolation);
  await Promise.all([
    writeJsonAtomic(paths.task, task),
    updateState(dir, (state) => ({
      ...state,
      workspace: isolation.workspace,
      worktree: isolation.worktree,
      branch: isolation.branch,
      base_ref: isolation.baseRef,
      start_tree: isolation.startTree,
      materialised: isolation.materialised,
      linked: isolation.linked,
    })),
  ]);

  const env = agentEnvironment(input.env, plan, task, dir, input.adapter.product);
  if (plan.worktree.setup.length > 0 && isolation.worktree) {
    // Under the task's deadline, counted from now (the agent's own run fixes it again when it starts).
    const setupStart = Date.now();
    const failure = await runSetup(plan.worktree.setup, isolation.workspace, env, raw, cancel, {
      deadlineAt: Date.now() + plan.timeout_ms,
      onProcess: async (pid) => {
        await updateState(dir, (state) => ({
          ...state,
          setup_process: pid === null ? null : recordProcess(pid),
        }));
      },
    });
    input.spans.record(
      "caesar.setup",
      setupStart,
      Date.now(),
      {
        "caesar.setup.commands": plan.worktree.setup.length,
        "caesar.setup.failed_command": failure?.command,
      },
      failure ? `setup command failed: ${failure.command}` : undefined,
    );
    if (failure) {
      await discardIsolation(plan, isolation);
      await updateState(dir, (state) => ({ ...state, worktree: null, branch: null, start_tree: null }));
      await end(
        { kind: "setup_failed", command: failure.command, exit: failure },
        { outputTail: failure.output },
      );
      return;
    }
  }
  await attempts(input, makeLaunch(plan, task, dir, env), {
    top: isolation.gitTop,
    startTree: isolation.startTree,
    excluded: isolation.materialised,
  });
}

/** Checks and further attempts, when the plan has them (attempts.ts); else one run of the agent. */
async function attempts(
  input: RunInput,
  launch: TurnInput["launch"],
  git: { top: string | null; startTree: string | null; excluded: string[] },
  resume?: { progress: AttemptsProgress; deadlineAt: number },
): Promise<void> {
  const turnInput = (turn: number, deadlineAt: number | undefined): TurnInput => ({
    ...input,
    launch,
    deadlineAt,
    turn,
  });
  await conductAttempts({
    dir: input.dir,
    plan: input.plan,
    adapter: input.adapter,
    events: input.events,
    raw: input.raw,
    cancel: input.cancel,
    launch,
    git,
    ...(input.egress ? { egress: input.egress } : {}),
    runTurn: (turnLaunch, deadlineAt, turn) =>
      runAgent({ ...turnInput(turn, deadlineAt), launch: turnLaunch }),
    ...(resume
      ? {
          resume: {
            progress: resume.progress,
            adopt: (turn, rawFrom) =>
              adoptAgent({ ...turnInput(turn, resume.deadlineAt), deadlineAt: resume.deadlineAt, rawFrom }),
          },
        }
      : {}),
    finish: input.finish,
  });
}

/**
 * Continue a task whose agent a previous conductor started: its workplace and launch are rebuilt from
 * caesar's records (never from the task directory), its current run is taken over, and the attempts go on
 * from where they stood.
 */
async function continueTask(input: RunInput, state: TaskState, progress: AttemptsProgress): Promise<void> {
  const { dir, plan } = input;
  if (state.check_process) await terminateGroup(state.check_process.pid);
  const task = makeTask(plan, state, dir, { workspace: state.workspace, baseRef: state.base_ref });
  const launch = makeLaunch(
    plan,
    task,
    dir,
    agentEnvironment(input.env, plan, task, dir, input.adapter.product),
  );
  const deadlineAt = state.deadline_at ? Date.parse(state.deadline_at) : Date.now() + plan.timeout_ms;
  await attempts(
    input,
    launch,
    { top: state.worktree ?? plan.repo_top, startTree: state.start_tree, excluded: state.materialised },
    { progress, deadlineAt },
  );
}

type ResumePoint =
  | { kind: "start" }
  | { kind: "adopt"; progress: AttemptsProgress; rawCut: number | undefined }
  | { kind: "finish"; why: string };

/**
 * Where a task stands that a conductor left unfinished. An agent that started (alive or not) is taken
 * over; a task whose agent never started starts again from scratch, its half-made worktree removed (no
 * agent ever worked in it); anything else is finished.
 */
async function resumePoint(dir: string, plan: TaskPlan, state: TaskState): Promise<ResumePoint> {
  if (state.phase === "queued") return { kind: "start" };
  if (state.agent_process === null) {
    if (state.phase !== "preparing") return { kind: "finish", why: "it was ending before its agent started" };
    // A setup command the previous conductor left running is stopped before the worktree goes.
    if (state.setup_process) await terminateGroup(state.setup_process.pid);
    if (state.worktree && plan.repo_top)
      await discardIsolation(plan, {
        worktree: state.worktree,
        branch: state.branch,
      } as Parameters<typeof discardIsolation>[1]).catch(() => undefined);
    await updateState(dir, (current) => ({
      ...current,
      phase: "queued",
      worktree: null,
      branch: null,
      setup_process: null,
      start_tree: null,
    }));
    return { kind: "start" };
  }
  const progress = await readProgress(dir);
  if (!progress) return { kind: "finish", why: "caesar's record of its agent's run is gone" };
  if (progress.turn !== state.agent_turn)
    return { kind: "finish", why: "it was between two runs of its agent" };
  const files = agentFiles(agentOutputDir(dir), progress.turn);
  // An agent writing straight into raw.log: all of it there is its own, nothing to cut.
  if (isDirect(files)) return { kind: "adopt", progress, rawCut: undefined };
  const cursor = await readCursor(files.cursor);
  return { kind: "adopt", progress, rawCut: cursor?.raw ?? progress.raw_from };
}

/** A task that cannot be taken over: its agent stopped if it still runs, then finished as failed. */
async function finishUnadoptable(
  state: TaskState,
  why: string,
  describe: Describe,
  finish: Finish,
): Promise<void> {
  const stopped = state.agent_process !== null && isProcessAlive(state.agent_process);
  for (const group of [state.agent_process, state.check_process, state.setup_process])
    if (group) await terminateGroup(group.pid);
  const ending = await describe(
    {
      kind: "abandoned",
      by: "service",
      conductorPid: state.conductor?.pid ?? null,
      agentPid: state.agent_process?.pid ?? null,
      cancelled: state.cancel_requested !== null,
      why,
      agentStopped: stopped,
    },
    { command: state.command },
  );
  await finish({ stream: {}, ending });
}

/** With CAESAR_TRACE=1, a phase and its time into the task's log (stderr by default). */
function phaseNote(log: ((line: string) => void) | undefined): (phase: string) => void {
  if (!log) return trace;
  return (phase) => {
    if (process.env.CAESAR_TRACE === "1")
      log(`[trace] ${Date.now() % 100000} (+${performance.now().toFixed(0)}) ${phase}`);
  };
}

async function finishAfterCrash(dir: string, end: End, error: unknown): Promise<void> {
  try {
    await end({ kind: "crashed", error });
  } catch (second) {
    // A full disk is not the end of the task: whoever conducts it finishes it once caesar can write again
    // (engine/service), rather than leave a last-resort state that could not be written either.
    const full = diskFullError(error) ?? diskFullError(second);
    if (full) throw full;
    // Last resort: the state must not stay "running".
    await updateState(dir, (state) => ({
      ...state,
      phase: "finished",
      outcome: "failed",
      finished_at: new Date().toISOString(),
      error: {
        code: "conductor_error",
        message: `${messageOf(error)}; then while finishing: ${messageOf(second)}`,
      },
    })).catch(() => undefined);
  }
}
