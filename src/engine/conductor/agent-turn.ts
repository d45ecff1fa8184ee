import { StringDecoder } from "node:string_decoder";
import type { AgentAdapter, LaunchContext, ProcessExit, StreamOutcome } from "../../agents/adapter.js";
import { writeLaunchFiles } from "../../agents/launch-files.js";
import type { EventBody } from "../../protocol/event.js";
import { LineBuffer } from "../../protocol/jsonl.js";
import { taskPaths } from "../../protocol/task-dir.js";
import { formatDuration } from "../../support/duration.js";
import { messageOf } from "../../support/errors.js";
import { ByteTail, OutputTail, tailOf } from "../../support/output-tail.js";
import { recordProcess } from "../../support/process.js";
import type { EventWriter } from "../store/event-log.js";
import { readTaskTailBytes } from "../store/task-files.js";
import type { TaskPlan } from "../store/task-plan.js";
import { readState, updateState } from "../store/task-store.js";
import { type ActionMeter, makeActionMeter, type OverBudget } from "./action-meter.js";
import { agentFiles, type OutputSink, type OutputStream, readCursor } from "./agent-output.js";
import { type AgentProcess, adoptAgentProcess, isDirect, startAgentProcess } from "./agent-process.js";
import { type AgentStream, makeAgentStream } from "./agent-stream.js";
import type { AgentTurn } from "./attempts.js";
import { BROKER_ENV } from "./broker-files.js";
import { issueTaskToken, TASK_TOKEN_ENV } from "./credentials.js";
import type { Ending, EndingCause, EndingContext } from "./ending.js";
import { findExecutable } from "./executable.js";
import { agentOutputDir } from "./output-dir.js";
import type { RawLog } from "./raw-log.js";
import { prepareSandboxCommits } from "./sandbox-commits.js";
import { type EgressDoor, sandboxCommand } from "./sandbox-run.js";

/** How a task ended, in words, from its cause (ending.ts). */
export type Describe = (cause: EndingCause, context?: Partial<EndingContext>) => Promise<Ending>;

export interface TurnInput {
  dir: string;
  taskId: string;
  plan: TaskPlan;
  adapter: AgentAdapter;
  events: EventWriter;
  raw: RawLog;
  cancel: AbortSignal;
  describe: Describe;
  note: (phase: string) => void;
  launch: LaunchContext;
  /** The task's deadline (epoch ms); undefined for the first run, which fixes it. */
  deadlineAt: number | undefined;
  /** Which run of the agent this is (1 for the first; more for further attempts). */
  turn: number;
  /** The task's broker socket (a sandboxed agent's door to caesar), when it has one. */
  broker?: string;
  /** The task's egress proxy (a sandboxed agent's door to the network), when it has one. */
  egress?: EgressDoor;
}

/** Run the agent once: build its command, start it under its keeper, and follow it to its end. */
export async function runAgent(input: TurnInput): Promise<AgentTurn> {
  const { dir, plan, events, raw, launch, adapter, describe } = input;
  const command = adapter.buildCommand(launch);
  // Per-run files (CLI config, schema) and links (a CLI home overlay keeping the user's credentials).
  await writeLaunchFiles(command, dir);
  if (command.materialised?.length) {
    await updateState(dir, (state) => ({
      ...state,
      materialised: [...new Set([...state.materialised, ...command.materialised!])],
    }));
  }
  input.note("conductor: command built");
  // Credentials per run: in the agent's environment only, their hash in caesar's record (credentials.ts).
  const token = await issueTaskToken(dir);
  const rawFrom = await raw.written();
  const deadlineAt = input.deadlineAt ?? Date.now() + plan.timeout_ms;
  const output = makeOutput(input, deadlineAt);
  const state = await readState(dir);
  const commits = await prepareSandboxCommits(plan, state);
  if (Object.keys(commits).length > 0) input.note("conductor: commits' folder ready");
  const env: Record<string, string> = {
    ...launch.env,
    ...command.env,
    ...commits,
    [TASK_TOKEN_ENV]: token,
    ...(input.broker ? { [BROKER_ENV]: input.broker } : {}),
  };
  const failedToStart = async (error: NodeJS.ErrnoException | undefined) => ({
    kind: "error" as const,
    ending: await describe({ kind: "spawn_failed", bin: command.bin, error }, { command: command.display }),
  });
  // The program is looked up here, before its sandbox, so that a missing one is said as such.
  const found = findExecutable(command.bin, env.PATH ?? process.env.PATH ?? "", command.cwd);
  if (!found.ok) return failedToStart(found.error);
  // An agent whose output is read by no translator as it comes writes it straight into raw.log — unless it
  // runs in caesar's OS sandbox, where raw.log is read-only to it: a file it could write to (an inherited
  // descriptor can be made to overwrite, truncate) would undo that, so its output is copied there as a line
  // translator's is.
  const direct =
    output.stream.stdoutBytes && !output.stream.stdinPipe && plan.sandbox.backend !== "bwrap"
      ? raw.fd
      : undefined;
  const sandboxed = sandboxCommand(
    plan,
    state,
    dir,
    { ...command, bin: found.path },
    env,
    { broker: input.broker, egress: input.egress },
    adapter.product,
  );
  const agent = await startAgentProcess({
    bin: sandboxed.bin,
    args: sandboxed.args,
    cwd: command.cwd,
    env: sandboxed.env,
    files: agentFiles(agentOutputDir(dir), input.turn),
    sink: output.sink,
    stdinPipe: output.stream.stdinPipe,
    ...(direct !== undefined ? { direct } : {}),
  });
  if (agent.pid === undefined) return failedToStart((await agent.done).spawnError);
  input.note("conductor: agent spawned");
  output.stream.attach(agent);
  const startedAt = new Date();
  // Appended before anything else is awaited, so it precedes what the agent writes itself.
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
    agent_turn: input.turn,
    agent_started_at: startedAt.toISOString(),
    command: command.display,
    check_process: null,
    ...(input.deadlineAt === undefined
      ? { started_at: startedAt.toISOString(), deadline_at: new Date(deadlineAt).toISOString() }
      : {}),
  }));
  await started;
  return awaitAgent(input, {
    agent,
    output,
    command: command.display,
    startedAt,
    deadlineAt,
    rawFrom,
    direct: direct !== undefined,
  });
}

/**
 * Take over the current run of an agent whose conductor is gone — still running, or ended since: its output
 * so far is replayed into a new stream translator, the rest followed, its exit read from its keeper's file.
 */
export async function adoptAgent(
  input: TurnInput & { deadlineAt: number; rawFrom: number },
): Promise<AgentTurn> {
  const { dir } = input;
  const state = await readState(dir);
  const keeper = state.agent_process;
  if (!keeper) throw new Error("no agent process is recorded to take over");
  const output = makeOutput(input, input.deadlineAt);
  if (output.stream.stdinPipe)
    throw new Error("a session agent (driven over its stdin) ends with its conductor");
  const files = agentFiles(agentOutputDir(dir), input.turn);
  const direct = isDirect(files);
  const cursor = (await readCursor(files.cursor)) ?? { stdout: 0, stderr: 0, raw: input.rawFrom };
  const agent = await adoptAgentProcess({ keeper, files, sink: output.sink, cursor });
  await input.events.append({
    type: "progress",
    message: `the conductor service took over ${input.plan.agent} (pid ${keeper.pid}) from a conductor that ended`,
  });
  return awaitAgent(input, {
    agent,
    output,
    command: state.command ?? input.plan.agent,
    startedAt: new Date(state.agent_started_at ?? state.started_at ?? Date.now()),
    deadlineAt: input.deadlineAt,
    rawFrom: input.rawFrom,
    direct,
  });
}

interface Running {
  agent: AgentProcess;
  output: Output;
  command: string;
  startedAt: Date;
  deadlineAt: number;
  rawFrom: number;
  /** The agent's output went straight into raw.log (from `rawFrom` on): nothing was handed to the stream. */
  direct: boolean;
}

/** Follow a started (or adopted) agent to its end: deadline, cancel, stall notices, then how it ended. */
async function awaitAgent(input: TurnInput, running: Running): Promise<AgentTurn> {
  const { events, cancel, plan, describe, raw } = input;
  const { agent, output, deadlineAt, startedAt } = running;
  let stopReason: "timed_out" | "cancelled" | "over_budget" | undefined;
  let overBudget: OverBudget | undefined;
  const stop = (reason: "timed_out" | "cancelled" | "over_budget") => {
    if (stopReason) return;
    stopReason = reason;
    output.stream.stop(agent);
  };
  // Its tree's tool calls (max_actions_per_hour): one too many, and the agent is stopped.
  let exited = false;
  output.meter.onExceeded((over) => {
    overBudget = over;
    // Counted after the agent ended by itself: nothing to stop, but the task still went over.
    if (exited) stopReason ??= "over_budget";
    else stop("over_budget");
  });
  const deadline = setTimeout(() => stop("timed_out"), Math.max(0, deadlineAt - Date.now()));
  const onCancel = () => stop("cancelled");
  cancel.addEventListener("abort", onCancel, { once: true });
  if (cancel.aborted) onCancel();
  // Output written straight into raw.log is seen by its size.
  let rawSize = running.direct ? raw.sizeOnDisk() : 0;
  const stall = setInterval(
    () => {
      if (running.direct) {
        const size = raw.sizeOnDisk();
        if (size !== rawSize) output.lastOutput = Date.now();
        rawSize = size;
      }
      const silent = Date.now() - output.lastOutput;
      if (silent >= plan.stall_ms) {
        output.lastOutput = Date.now();
        void events.append({
          type: "progress",
          message: `no output from the agent for ${formatDuration(silent)}`,
        });
      }
    },
    Math.min(plan.stall_ms, 10_000),
  );

  const exit = await agent.done;
  exited = true;
  input.note("conductor: agent done");
  clearTimeout(deadline);
  clearInterval(stall);
  cancel.removeEventListener("abort", onCancel);
  // Its end, for the translator (which keeps only that) and a failure's words: stdout and stderr as one.
  if (running.direct)
    output.direct(await readTaskTailBytes(taskPaths(input.dir).raw, DIRECT_TAIL_BYTES, running.rawFrom));
  await events.flush();

  let said: StreamOutcome = {};
  try {
    said = await output.stream.finish({ code: exit.code, signal: exit.signal } satisfies ProcessExit);
  } catch (error) {
    raw.write(`[caesar] the stream translator failed at the end: ${messageOf(error)}\n`);
  }
  await events.flush();
  // What the stream still held: text being accumulated, tools left open (closed as failed).
  for (const body of said.events ?? []) await events.append(body);
  await output.meter.idle();
  const ending = await describe(
    {
      kind: "exited",
      exit: { code: exit.code, signal: exit.signal },
      stoppedFor: stopReason,
      ...(overBudget ? { overBudget } : {}),
      streamFailure: said.failure,
      ...(said.processOutcome ? { processOutcome: said.processOutcome } : {}),
    },
    { command: running.command, outputTail: output.tail(), ranMs: Date.now() - startedAt.getTime() },
  );
  return {
    kind: "exited",
    stream: said,
    ending,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    deadlineAt,
    rawFrom: running.rawFrom,
  };
}

/** The last lines of stdout a failure message shows, and the bytes of a flood kept to find them. */
const STDOUT_TAIL_LINES = 10;
const STDOUT_TAIL_BYTES = 64 * 1024;
/** Of an agent that wrote straight into raw.log, the end of it read for its translator (which keeps less). */
const DIRECT_TAIL_BYTES = 512 * 1024;

interface Output {
  sink: OutputSink;
  stream: AgentStream;
  /** When the agent last wrote anything (for the stall notice). */
  lastOutput: number;
  /** What the agent last said on stderr (else on stdout): the words of a failure message. */
  tail(): string;
  /** Its tool calls, counted in its tree's budget. */
  meter: ActionMeter;
  /** The end of output an agent wrote straight into raw.log (stdout and stderr), once it has ended. */
  direct(bytes: Buffer): void;
}

/**
 * Where the agent's output goes: raw.log as it comes, and the adapter's stream (a line translator, or a
 * session the adapter drives over stdio) whose events are appended to events.jsonl. A chunk counts as
 * handled once both are written (the reader's cursor then moves past it).
 */
function makeOutput(input: TurnInput, deadlineAt: number): Output {
  const { adapter, launch, dir, taskId, raw, events, plan } = input;
  let replaying = false;
  // Replayed output (a conductor taking over) was counted by the one that first saw it.
  const meter = makeActionMeter(plan, taskId);
  const emit = (bodies: EventBody[]) => {
    if (replaying) return;
    for (const body of bodies) {
      void events.append(body);
      meter.see(body);
    }
  };
  const stream = makeAgentStream({
    adapter,
    launch,
    dir,
    taskId,
    raw,
    emit,
    ...(plan.ask_permissions ? { askPermissionsUntil: deadlineAt } : {}),
  });
  const stderrTail = new OutputTail();
  const stdoutTail = new OutputTail(STDOUT_TAIL_LINES);
  // Of a translator that takes stdout as bytes, the end of it, read as lines only when a failure needs them.
  const stdoutBytes = stream.stdoutBytes ? new ByteTail(STDOUT_TAIL_BYTES) : undefined;
  const lines = { stdout: new LineBuffer(), stderr: new LineBuffer() };
  const decoders = { stdout: new StringDecoder("utf8"), stderr: new StringDecoder("utf8") };
  // A translator that reads no line of stdout gets its bytes as they came (a flood is neither decoded nor
  // split into lines).
  const feed = (name: OutputStream, bytes: Buffer) => {
    if (name === "stdout" && stream.stdoutBytes) {
      stdoutBytes?.push(bytes);
      stream.stdoutBytes(bytes);
    } else for (const line of lines[name].push(decoders[name].write(bytes))) handle(name, line);
  };
  const handle = (name: OutputStream, line: string) => {
    if (name === "stdout") {
      stdoutTail.push(line);
      stream.stdout(line);
    } else {
      stderrTail.push(line);
      stream.stderr(line);
    }
  };
  const output: Output = {
    stream,
    meter,
    lastOutput: Date.now(),
    // A session agent's stdout is the protocol (JSON-RPC frames): its words are on stderr only.
    tail: () =>
      stderrTail.text ||
      (stream.stdinPipe ? "" : stdoutBytes ? tailOf(stdoutBytes.text(), STDOUT_TAIL_LINES) : stdoutTail.text),
    direct(bytes) {
      stdoutBytes?.push(bytes);
      stream.stdoutBytes?.(bytes);
    },
    sink: {
      async consume(name, bytes) {
        output.lastOutput = Date.now();
        // raw.log gets the bytes as the agent wrote them; the buffer is not reused before they are written.
        const size = await raw.append(bytes);
        feed(name, bytes);
        await events.flush();
        return size;
      },
      replay(name, bytes) {
        replaying = true;
        try {
          feed(name, bytes);
        } finally {
          replaying = false;
        }
      },
      async end() {
        for (const name of ["stdout", "stderr"] as const) {
          // An unfinished character at the very end (its replacement); the bytes themselves are in raw.log.
          const rest = decoders[name].end();
          const last = [...(rest ? lines[name].push(rest) : []), ...lines[name].flush()];
          for (const line of last) handle(name, line);
        }
        await events.flush();
      },
    },
  };
  return output;
}
