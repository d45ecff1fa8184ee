import { createWriteStream, type WriteStream } from "node:fs";
import { mkdir, stat } from "node:fs/promises";
import { join } from "node:path";
import type { AgentAdapter, LaunchContext, ProcessExit, StreamOutcome } from "../../agents/adapter.js";
import { writeLaunchFiles } from "../../agents/launch-files.js";
import { findAdapter } from "../../agents/registry.js";
import { loadConfig } from "../../config/effective.js";
import type { EventBody } from "../../protocol/event.js";
import type { Task } from "../../protocol/task.js";
import { CAESAR_ENV_NAMES, makeCaesarEnv, taskPaths } from "../../protocol/task-dir.js";
import { PROTOCOLS } from "../../protocol/versions.js";
import { writeJsonAtomic } from "../../support/atomic-file.js";
import { formatDuration } from "../../support/duration.js";
import { messageOf } from "../../support/errors.js";
import { OutputTail } from "../../support/output-tail.js";
import { recordProcess } from "../../support/process.js";
import { trace } from "../../support/trace.js";
import { controlPaths } from "../store/control.js";
import { EventWriter } from "../store/event-log.js";
import { projectPaths } from "../store/project.js";
import type { TaskState } from "../store/state.js";
import { loadPlan, type TaskPlan } from "../store/task-plan.js";
import { readState, taskDirOf, updateState } from "../store/task-store.js";
import { type AgentProcess, startAgentProcess } from "./agent-process.js";
import { type AgentStream, makeAgentStream } from "./agent-stream.js";
import { type AgentTurn, conductAttempts } from "./attempts.js";
import { makeBrief } from "./brief.js";
import { issueTaskToken, TASK_TOKEN_ENV } from "./credentials.js";
import { describeEnding, type Ending, type EndingCause, type EndingContext } from "./ending.js";
import { type FinishInput, finishTask } from "./finish.js";
import { discardIsolation, type Isolation, isolate, plannedWorktree, runSetup } from "./isolate.js";
import { returnChannelFor } from "./return-channel.js";
import { lendingOf } from "./slot-lending.js";
import { acquireSlot } from "./slots.js";

/** What the conductor's entry hands it from the rooms it may not import. */
export interface ConductorHooks {
  /** After the task's final state (a race contender settles its race here). */
  settled?(plan: TaskPlan, final: TaskState): Promise<void>;
}

export interface ConductOptions extends ConductorHooks {
  /** Cancels the task: the agent's process group is ended and the task concluded `cancelled`. */
  signal?: AbortSignal;
  /** The environment the agent inherits (less a parent task's CAESAR_* variables); default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Where this task's diagnostics go (with CAESAR_TRACE=1, its phase timings); default stderr. */
  log?: (line: string) => void;
  /** Take one of the project's `[policy] max_parallel` slots first (default true; a worker has its own cap). */
  takeSlot?: boolean;
}

/**
 * The conductor: owns a task from its slot to its final state. It touches no process-wide state — its
 * cancel, its agent's environment and its diagnostics are given to it — so one process can conduct one
 * task (the detached conductor, process.ts, which turns the process's signals into the cancel) or many
 * (a cluster worker). It never leaves a task "running": whatever happens, it writes a final state.
 */
export async function conduct(root: string, taskId: string, options: ConductOptions = {}): Promise<void> {
  const dir = taskDirOf(root, taskId);
  const plan = await loadPlan(dir);
  const paths = taskPaths(dir);
  const events = new EventWriter(paths.events, taskId);
  const note = phaseNote(options.log);
  const cancel = new AbortController();
  const onCancel = () => cancel.abort(new Error("cancelled"));
  options.signal?.addEventListener("abort", onCancel, { once: true });
  if (options.signal?.aborted) onCancel();

  // The configuration loads while the state is written (its errors are thrown below, inside the try).
  const configLoad = loadConfig(root).then(
    (config) => ({ config }),
    (error: unknown) => ({ error }),
  );
  const initial = await updateState(dir, (state) => ({ ...state, conductor: recordProcess(process.pid) }));
  note("conductor: state recorded");
  if (initial.phase === "finished") return;
  if (initial.cancel_requested) cancel.abort(new Error("cancelled"));

  let release: (() => Promise<void>) | undefined;
  const raw = createWriteStream(paths.raw, { flags: "a" });
  let closed = false;
  // Release what the conductor holds before the final state is written (see finishTask).
  const closeUp = async () => {
    if (closed) return;
    closed = true;
    await new Promise<void>((resolve) => raw.end(resolve));
    await release?.();
  };
  const finish = async (input: Omit<FinishInput, "dir" | "plan" | "events" | "beforeFinalState">) => {
    const final = await finishTask({ dir, plan, events, ...input, beforeFinalState: closeUp });
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
    const loaded = await configLoad;
    if ("error" in loaded) throw loaded.error;
    const { config } = loaded;
    const adapter = findAdapter(config, root, plan.agent);
    note("conductor: config loaded");
    if (options.takeSlot === false) release = async () => {};
    else
      release = await acquireSlot(
        controlPaths(root).slots,
        taskId,
        config.policy.max_parallel.value,
        (holders) =>
          updateState(dir, (state) => ({ ...state, waiting_for_slot: holders })).then(() => undefined),
        cancel.signal,
        lendingOf(root, plan),
      ).catch((error) => {
        if (cancel.signal.aborted) return undefined;
        throw error;
      });
    if (!release) {
      await end({ kind: "cancelled_before_start" });
      return;
    }
    await runTask({
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
      env: options.env ?? process.env,
      note,
    });
  } catch (error) {
    await finishAfterCrash(dir, end, error);
  } finally {
    await closeUp();
    options.signal?.removeEventListener("abort", onCancel);
  }
}

type Finish = (input: Omit<FinishInput, "dir" | "plan" | "events" | "beforeFinalState">) => Promise<unknown>;
/** How a task ended, in words, from its cause (ending.ts). */
type Describe = (cause: EndingCause, context?: Partial<EndingContext>) => Promise<Ending>;
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
  raw: WriteStream;
  cancel: AbortSignal;
  env: NodeJS.ProcessEnv;
  note: (phase: string) => void;
}

async function runTask(input: RunInput): Promise<void> {
  const { dir, plan, adapter, raw, cancel, finish, end, taskId } = input;
  const paths = taskPaths(dir);
  const planned = plannedWorktree(plan, taskId);
  await updateState(dir, (state) => ({
    ...state,
    phase: "preparing",
    waiting_for_slot: null,
    ...(planned ? { worktree: planned.path, branch: planned.branch } : {}),
  }));
  if (cancel.aborted) {
    await end({ kind: "cancelled_before_start" });
    return;
  }

  const isolation = await isolate(plan, taskId);
  input.note("conductor: isolated");
  const task = makeTask(plan, taskId, dir, isolation);
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

  const env = agentEnvironment(input.env, plan, task, dir, input.root);
  if (plan.worktree.setup.length > 0 && isolation.worktree) {
    const failure = await runSetup(plan.worktree.setup, isolation.workspace, env, raw, cancel);
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

  const runtimeDir = join(dir, "runtime");
  await mkdir(runtimeDir, { recursive: true });
  // The agent's credentials: in its environment only, their hash in caesar's record (credentials.ts).
  const token = await issueTaskToken(dir);
  const launch: LaunchContext = {
    task,
    paths,
    prompt: makeBrief(
      task,
      paths,
      plan.system_prompt,
      plan.checks.map((check) => check.command),
    ),
    mode: plan.mode,
    network: plan.network,
    ...(plan.model ? { model: plan.model } : {}),
    tools: plan.tools,
    extraArgs: plan.extra_args,
    ...(plan.channel ? { channel: returnChannelFor(dir) } : {}),
    extraDirs: [dir],
    runtimeDir,
    env: { ...env, [TASK_TOKEN_ENV]: token },
  };
  // Checks and further attempts, when the plan has them (attempts.ts); else one run of the agent.
  await conductAttempts({
    dir,
    plan,
    adapter,
    events: input.events,
    raw,
    cancel,
    launch,
    git: { top: isolation.gitTop, startTree: isolation.startTree, excluded: isolation.materialised },
    runTurn: (turnLaunch, deadlineAt) => runAgent({ ...input, launch: turnLaunch, deadlineAt }),
    finish,
  });
}

async function runAgent(
  input: RunInput & { launch: LaunchContext; deadlineAt: number | undefined },
): Promise<AgentTurn> {
  const { dir, plan, events, raw, cancel, launch, adapter, taskId, describe } = input;
  const command = adapter.buildCommand(launch);
  // Per-run files (CLI config, schema) and links (a CLI home overlay keeping the user's credentials).
  await writeLaunchFiles(command);
  if (command.materialised?.length) {
    await updateState(dir, (state) => ({
      ...state,
      materialised: [...new Set([...state.materialised, ...command.materialised!])],
    }));
  }
  input.note("conductor: command built");
  const rawFrom = await rawOffset(raw, taskPaths(dir).raw);
  // What the agent last said on stderr (else on stdout): the words of a failure message.
  const stderrTail = new OutputTail();
  const stdoutTail = new OutputTail(10);
  const outputTail = () => stderrTail.text || stdoutTail.text;
  const emit = (bodies: EventBody[]) => {
    for (const body of bodies) void events.append(body);
  };
  // The first run fixes the task's deadline; a later attempt runs within what is left of it.
  const deadlineAt = input.deadlineAt ?? Date.now() + plan.timeout_ms;
  // A line translator, or a session the adapter drives over stdio (ACP): the rest of the run is shared.
  const stream: AgentStream = makeAgentStream({
    adapter,
    launch,
    dir,
    taskId,
    raw,
    emit,
    ...(plan.ask_permissions ? { askPermissionsUntil: deadlineAt } : {}),
  });
  let lastOutput = Date.now();
  let agent: AgentProcess;
  try {
    agent = startAgentProcess({
      bin: command.bin,
      args: command.args,
      cwd: command.cwd,
      env: { ...launch.env, ...command.env },
      raw,
      stdinPipe: stream.stdinPipe,
      onStdoutLine: (line) => {
        stdoutTail.push(line);
        stream.stdout(line);
      },
      onStderrLine: (line) => {
        stderrTail.push(line);
        stream.stderr(line);
      },
      onOutput: () => {
        lastOutput = Date.now();
      },
    });
    stream.attach(agent);
  } catch (error) {
    return {
      kind: "error",
      ending: await describe({ kind: "spawn_failed", bin: command.bin, error }, { command: command.display }),
    };
  }
  const startedAt = new Date();
  if (agent.pid !== undefined) {
    // Appended at once, before anything else is awaited, so it precedes what the agent writes itself.
    const started = events.append({
      type: "started",
      agent: plan.agent,
      command: command.display,
      pid: agent.pid,
    });
    await updateState(dir, (state) => ({
      ...state,
      phase: "running",
      agent_process: recordProcess(agent.pid!),
      command: command.display,
      ...(input.deadlineAt === undefined
        ? { started_at: startedAt.toISOString(), deadline_at: new Date(deadlineAt).toISOString() }
        : {}),
    }));
    await started;
  }

  let stopReason: "timed_out" | "cancelled" | undefined;
  const stop = (reason: "timed_out" | "cancelled") => {
    if (stopReason) return;
    stopReason = reason;
    stream.stop(agent);
  };
  const deadline = setTimeout(() => stop("timed_out"), Math.max(0, deadlineAt - Date.now()));
  const onCancel = () => stop("cancelled");
  cancel.addEventListener("abort", onCancel, { once: true });
  if (cancel.aborted) onCancel();
  const stall = setInterval(
    () => {
      const silent = Date.now() - lastOutput;
      if (silent >= plan.stall_ms) {
        lastOutput = Date.now();
        void events.append({
          type: "progress",
          message: `no output from the agent for ${formatDuration(silent)}`,
        });
      }
    },
    Math.min(plan.stall_ms, 10_000),
  );

  const exit = await agent.done;
  input.note("conductor: agent done");
  clearTimeout(deadline);
  clearInterval(stall);
  cancel.removeEventListener("abort", onCancel);
  await events.flush();

  if (exit.spawnError) {
    return {
      kind: "error",
      ending: await describe(
        { kind: "spawn_failed", bin: command.bin, error: exit.spawnError },
        { command: command.display },
      ),
    };
  }
  let said: StreamOutcome = {};
  try {
    said = await stream.finish({ code: exit.code, signal: exit.signal } satisfies ProcessExit);
  } catch (error) {
    raw.write(`[caesar] the stream translator failed at the end: ${messageOf(error)}\n`);
  }
  await events.flush();
  // What the stream still held: text being accumulated, tools left open (closed as failed).
  for (const body of said.events ?? []) await events.append(body);
  const ending = await describe(
    {
      kind: "exited",
      exit: { code: exit.code, signal: exit.signal },
      stoppedFor: stopReason,
      streamFailure: said.failure,
      ...(said.processOutcome ? { processOutcome: said.processOutcome } : {}),
    },
    { command: command.display, outputTail: outputTail(), ranMs: Date.now() - startedAt.getTime() },
  );
  return {
    kind: "exited",
    stream: said,
    ending,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    deadlineAt,
    rawFrom,
  };
}

/** The size of raw.log once everything written to it so far is on disk. */
async function rawOffset(raw: WriteStream, path: string): Promise<number> {
  await new Promise<void>((resolve) => raw.write("", () => resolve()));
  return (await stat(path).catch(() => ({ size: 0 }))).size;
}

function makeTask(plan: TaskPlan, taskId: string, dir: string, isolation: Isolation): Task {
  const paths = taskPaths(dir);
  return {
    protocol: PROTOCOLS.task,
    id: taskId,
    created_at: new Date().toISOString(),
    // The seed marks role optional: absent, not null, reads the same under either reading of "optional".
    ...(plan.role ? { role: plan.role } : {}),
    agent: plan.agent,
    objective: plan.objective,
    context: plan.context,
    constraints: plan.constraints,
    acceptance_criteria: plan.acceptance,
    mode: plan.mode,
    isolation: plan.isolation,
    network: plan.network,
    workspace: isolation.workspace,
    base_ref: isolation.baseRef,
    deadline_ms: plan.timeout_ms,
    depth: plan.depth,
    report_path: paths.report,
    events_path: paths.events,
    channel: plan.channel ? returnChannelFor(dir).coordinates : null,
  };
}

/** With CAESAR_TRACE=1, a phase and its time into the task's log (stderr by default). */
function phaseNote(log: ((line: string) => void) | undefined): (phase: string) => void {
  if (!log) return trace;
  return (phase) => {
    if (process.env.CAESAR_TRACE === "1")
      log(`[trace] ${Date.now() % 100000} (+${performance.now().toFixed(0)}) ${phase}`);
  };
}

/**
 * The agent's environment: the given one, minus a parent task's CAESAR_* variables (its credentials
 * included), plus this task's.
 */
function agentEnvironment(
  base: NodeJS.ProcessEnv,
  plan: TaskPlan,
  task: Task,
  dir: string,
  root: string,
): Record<string, string> {
  const inherited = new Set<string>([...CAESAR_ENV_NAMES, "CAESAR_CHANNEL_TASK_DIR", TASK_TOKEN_ENV]);
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(base)) {
    if (value !== undefined && !inherited.has(key)) env[key] = value;
  }
  return {
    ...env,
    ...makeCaesarEnv({ dir, taskId: task.id, agent: plan.agent, depth: plan.depth }),
    AGENT_CHAT_ROOT: projectPaths(root).chat,
  };
}

async function finishAfterCrash(dir: string, end: End, error: unknown): Promise<void> {
  try {
    await end({ kind: "crashed", error });
  } catch (second) {
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
