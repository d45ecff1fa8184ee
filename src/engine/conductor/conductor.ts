import { createWriteStream, type WriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type {
  AgentAdapter,
  LaunchContext,
  ProcessExit,
  StreamOutcome,
  StreamTranslator,
} from "../../agents/adapter.js";
import { writeLaunchFiles } from "../../agents/launch-files.js";
import { findAdapter } from "../../agents/registry.js";
import { loadConfig } from "../../config/effective.js";
import type { EventBody } from "../../protocol/event.js";
import type { Task } from "../../protocol/task.js";
import { CAESAR_ENV_NAMES, makeCaesarEnv, taskPaths } from "../../protocol/task-dir.js";
import { PROTOCOLS } from "../../protocol/versions.js";
import { writeJsonAtomic } from "../../support/atomic-file.js";
import { formatDuration } from "../../support/duration.js";
import { isCaesarError, messageOf } from "../../support/errors.js";
import { recordProcess } from "../../support/process.js";
import { trace } from "../../support/trace.js";
import { controlPaths } from "../store/control.js";
import { EventWriter } from "../store/event-log.js";
import { projectPaths } from "../store/project.js";
import type { Outcome } from "../store/state.js";
import { loadPlan, type TaskPlan } from "../store/task-plan.js";
import { taskDirOf, updateState } from "../store/task-store.js";
import { type AgentProcess, startAgentProcess } from "./agent-process.js";
import { makeBrief } from "./brief.js";
import { issueTaskToken, TASK_TOKEN_ENV } from "./credentials.js";
import { type FinishInput, finishTask } from "./finish.js";
import { discardIsolation, type Isolation, isolate, plannedWorktree, runSetup } from "./isolate.js";
import { returnChannelFor } from "./return-channel.js";
import { lendingOf } from "./slot-lending.js";
import { acquireSlot } from "./slots.js";

/**
 * The conductor: the one process that owns a task from its slot to its final state. Started detached by
 * any front end, so closing a terminal or an MCP session never orphans the task. It never leaves a task
 * "running": whatever happens, it writes a final state.
 */
export async function conduct(root: string, taskId: string): Promise<void> {
  const dir = taskDirOf(root, taskId);
  const plan = await loadPlan(dir);
  const paths = taskPaths(dir);
  const events = new EventWriter(paths.events, taskId);
  const cancel = new AbortController();
  const onSignal = () => cancel.abort(new Error("cancelled"));
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, onSignal);

  // The configuration loads while the state is written (its errors are thrown below, inside the try).
  const configLoad = loadConfig(root).then(
    (config) => ({ config }),
    (error: unknown) => ({ error }),
  );
  const initial = await updateState(dir, (state) => ({ ...state, conductor: recordProcess(process.pid) }));
  trace("conductor: state recorded");
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
  const finish = (input: Omit<FinishInput, "dir" | "plan" | "events" | "beforeFinalState">) =>
    finishTask({ dir, plan, events, ...input, beforeFinalState: closeUp });
  try {
    const loaded = await configLoad;
    if ("error" in loaded) throw loaded.error;
    const { config } = loaded;
    const adapter = findAdapter(config, root, plan.agent);
    trace("conductor: config loaded");
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
      await finish({ stream: {}, outcome: "cancelled", exit: { code: null, signal: null } });
      return;
    }
    await runTask({ finish, root, taskId, dir, plan, adapter, events, raw, cancel: cancel.signal });
  } catch (error) {
    await finishAfterCrash(dir, finish, error);
  } finally {
    await closeUp();
    for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.off(signal, onSignal);
  }
}

type Finish = (input: Omit<FinishInput, "dir" | "plan" | "events" | "beforeFinalState">) => Promise<unknown>;

interface RunInput {
  finish: Finish;
  root: string;
  taskId: string;
  dir: string;
  plan: TaskPlan;
  adapter: AgentAdapter;
  events: EventWriter;
  raw: WriteStream;
  cancel: AbortSignal;
}

async function runTask(input: RunInput): Promise<void> {
  const { dir, plan, adapter, raw, cancel, finish, taskId } = input;
  const paths = taskPaths(dir);
  const planned = plannedWorktree(plan, taskId);
  await updateState(dir, (state) => ({
    ...state,
    phase: "preparing",
    waiting_for_slot: null,
    ...(planned ? { worktree: planned.path, branch: planned.branch } : {}),
  }));
  if (cancel.aborted) {
    await finish({ stream: {}, outcome: "cancelled", exit: { code: null, signal: null } });
    return;
  }

  const isolation = await isolate(plan, taskId);
  trace("conductor: isolated");
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

  const env = agentEnvironment(plan, task, dir, input.root);
  if (plan.worktree.setup.length > 0 && isolation.worktree) {
    const failure = await runSetup(plan.worktree.setup, isolation.workspace, env, raw, cancel);
    if (failure) {
      await discardIsolation(plan, isolation);
      await updateState(dir, (state) => ({ ...state, worktree: null, branch: null, start_tree: null }));
      const how = failure.signal ? `killed by ${failure.signal}` : `exit code ${failure.code}`;
      await finish({
        stream: {},
        outcome: "failed",
        exit: { code: failure.code, signal: failure.signal },
        launchError: {
          code: "setup_failed",
          message: `Setup command failed: \`${failure.command}\` (${how}). The agent did not run; see raw.log for its output. Fix [worktree] setup in .caesar/config.toml.`,
        },
      });
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
    prompt: makeBrief(task, paths, plan.system_prompt),
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
  const command = adapter.buildCommand(launch);
  // Per-run files (CLI config, schema) and links (a CLI home overlay keeping the user's credentials).
  await writeLaunchFiles(command);
  if (command.materialised?.length) {
    await updateState(dir, (state) => ({
      ...state,
      materialised: [...state.materialised, ...command.materialised!],
    }));
  }
  const translator = adapter.createTranslator(launch);
  trace("conductor: command built");
  await runAgent({ ...input, launch, command, translator });
}

async function runAgent(
  input: RunInput & {
    launch: LaunchContext;
    command: ReturnType<AgentAdapter["buildCommand"]>;
    translator: StreamTranslator;
  },
): Promise<void> {
  const { dir, plan, events, raw, cancel, command, translator, launch, finish } = input;
  const emit = (bodies: EventBody[]) => {
    for (const body of bodies) void events.append(body);
  };
  const safely = (fn: () => EventBody[]): EventBody[] => {
    try {
      return fn();
    } catch (error) {
      raw.write(`[caesar] the stream translator failed on a line: ${messageOf(error)}\n`);
      return [];
    }
  };
  let lastOutput = Date.now();
  let agent: AgentProcess;
  try {
    agent = startAgentProcess({
      bin: command.bin,
      args: command.args,
      cwd: command.cwd,
      env: { ...launch.env, ...command.env },
      raw,
      onStdoutLine: (line) => emit(safely(() => translator.stdout(line))),
      onStderrLine: (line) => emit(safely(() => translator.stderr?.(line) ?? [])),
      onOutput: () => {
        lastOutput = Date.now();
      },
    });
  } catch (error) {
    await finish({
      stream: {},
      outcome: "failed",
      exit: { code: null, signal: null },
      launchError: { code: "spawn_failed", message: `Could not start ${command.bin}: ${messageOf(error)}` },
    });
    return;
  }
  if (agent.pid !== undefined) {
    const startedAt = new Date();
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
      started_at: startedAt.toISOString(),
      deadline_at: new Date(startedAt.getTime() + plan.timeout_ms).toISOString(),
    }));
    await started;
  }

  let stopReason: Outcome | undefined;
  const stop = (reason: Outcome) => {
    if (stopReason) return;
    stopReason = reason;
    void agent.terminate();
  };
  const deadline = setTimeout(() => stop("timed_out"), plan.timeout_ms);
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
  trace("conductor: agent done");
  clearTimeout(deadline);
  clearInterval(stall);
  cancel.removeEventListener("abort", onCancel);
  await events.flush();

  if (exit.spawnError) {
    const missing = exit.spawnError.code === "ENOENT";
    await finish({
      stream: {},
      outcome: "failed",
      exit: { code: null, signal: null },
      launchError: {
        code: missing ? "agent_not_found" : "spawn_failed",
        message: missing
          ? `Agent "${plan.agent}" could not start: ${command.bin} was not found (is it installed and on PATH?).`
          : `Agent "${plan.agent}" could not start: ${exit.spawnError.message}`,
      },
    });
    return;
  }
  let stream: StreamOutcome = {};
  try {
    stream = await translator.finish({ code: exit.code, signal: exit.signal } satisfies ProcessExit);
  } catch (error) {
    raw.write(`[caesar] the stream translator failed at the end: ${messageOf(error)}\n`);
  }
  // What the stream still held: text being accumulated, tools left open (closed as failed).
  for (const body of stream.events ?? []) await events.append(body);
  if (stream.failure)
    await events.append({
      type: "error",
      message: stream.failure.message,
      ...(stream.failure.code ? { code: stream.failure.code } : {}),
    });
  const outcome: Outcome = stopReason ?? (exit.code === 0 ? "succeeded" : "failed");
  await finish({ stream, outcome, exit: { code: exit.code, signal: exit.signal } });
}

function makeTask(plan: TaskPlan, taskId: string, dir: string, isolation: Isolation): Task {
  const paths = taskPaths(dir);
  return {
    protocol: PROTOCOLS.task,
    id: taskId,
    created_at: new Date().toISOString(),
    role: plan.role,
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

/**
 * The agent's environment: the caller's, minus a parent task's CAESAR_* variables (its credentials
 * included), plus this task's.
 */
function agentEnvironment(plan: TaskPlan, task: Task, dir: string, root: string): Record<string, string> {
  const inherited = new Set<string>([...CAESAR_ENV_NAMES, "CAESAR_CHANNEL_TASK_DIR", TASK_TOKEN_ENV]);
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !inherited.has(key)) env[key] = value;
  }
  return {
    ...env,
    ...makeCaesarEnv({ dir, taskId: task.id, agent: plan.agent, depth: plan.depth }),
    AGENT_CHAT_ROOT: projectPaths(root).chat,
  };
}

async function finishAfterCrash(dir: string, finish: Finish, error: unknown): Promise<void> {
  const code = (error as { code?: string })?.code;
  try {
    await finish({
      stream: {},
      outcome: "failed",
      exit: { code: null, signal: null },
      launchError: {
        code: typeof code === "string" ? code : "conductor_error",
        message: `The task could not run: ${messageOf(error)}${isCaesarError(error) && error.detail ? ` ${error.detail}` : ""}`,
      },
    });
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
