import type {
  AgentAdapter,
  LaunchContext,
  ProcessExit,
  SessionDriver,
  SessionHost,
  StreamOutcome,
} from "../../agents/adapter.js";
import type { EventBody } from "../../protocol/event.js";
import type { ToolPreview } from "../../protocol/questions.js";
import { messageOf } from "../../support/errors.js";
import { askQuestion, waitForAnswer } from "../questions/ask.js";
import type { AgentProcess } from "./agent-process.js";

/** How long a session gets to end by itself once it is over or cancelled, before its group is ended. */
export const SESSION_END_GRACE_MS = 1000;

/**
 * What the runner feeds the agent's output into: a line translator, or a session the adapter drives over
 * stdio. Either way the runner keeps the process group, raw.log, the deadline and cancellation.
 */
export interface AgentStream {
  /** The agent's stdin must stay open (a session). */
  readonly stdinPipe: boolean;
  /** Bind the started process (a session writes to its stdin). */
  attach(agent: AgentProcess): void;
  stdout(line: string): void;
  /** Present when the translator takes stdout as bytes (it reads no line): see StreamTranslator. */
  stdoutBytes?(bytes: Uint8Array): void;
  stderr(line: string): void;
  /**
   * The task is being stopped (cancel, deadline). A session cancels itself and the group is ended after a
   * grace; a line translator has nothing to say, and the group is ended at once.
   */
  stop(agent: AgentProcess): void;
  finish(exit: ProcessExit): Promise<StreamOutcome>;
}

export interface AgentStreamContext {
  adapter: AgentAdapter;
  launch: LaunchContext;
  dir: string;
  taskId: string;
  /** raw.log, for the stream's own notes. */
  raw: { write(text: string): unknown };
  emit(events: EventBody[]): void;
  /** Ask a person about permissions the policy allows (plan `ask_permissions`), until this deadline. */
  askPermissionsUntil?: number;
}

export function makeAgentStream(context: AgentStreamContext): AgentStream {
  const { adapter, launch, raw, emit } = context;
  if (!adapter.drive) {
    const translator = adapter.createTranslator(launch);
    // A translator that throws on one line loses that line, never the task.
    const safely = (fn: () => EventBody[]) => {
      try {
        emit(fn());
      } catch (error) {
        raw.write(`[caesar] the stream translator failed on a line: ${messageOf(error)}\n`);
      }
    };
    return {
      stdinPipe: false,
      attach() {},
      stdout: (line) => safely(() => translator.stdout(line)),
      ...(translator.stdoutBytes ? { stdoutBytes: translator.stdoutBytes.bind(translator) } : {}),
      stderr: (line) => safely(() => translator.stderr?.(line) ?? []),
      stop: (agent) => void agent.terminate(),
      finish: (exit) => translator.finish(exit),
    };
  }
  return makeSessionStream(context, adapter.drive.bind(adapter));
}

function makeSessionStream(
  context: AgentStreamContext,
  drive: (launch: LaunchContext, host: SessionHost) => SessionDriver,
): AgentStream {
  const { launch, raw, emit } = context;
  const stopping = new AbortController();
  let agent: AgentProcess | undefined;
  let ending: NodeJS.Timeout | undefined;
  // Whatever is left of the group is ended after a grace (agents usually exit once stdin closes).
  const endAfterGrace = () => {
    if (ending || !agent) return;
    const current = agent;
    ending = setTimeout(() => void current.terminate(), SESSION_END_GRACE_MS);
    ending.unref();
  };
  const endSoon = () => {
    agent?.closeStdin();
    endAfterGrace();
  };
  const host: SessionHost = {
    send: (line) => agent?.write(`${line}\n`),
    emit,
    stopping: stopping.signal,
    done: endSoon,
    note: (text) => raw.write(`[caesar] ${text}\n`),
    ...(context.askPermissionsUntil !== undefined
      ? { askPerson: makeAskPerson(context, context.askPermissionsUntil, stopping.signal) }
      : {}),
  };
  let driver: SessionDriver | undefined;
  return {
    stdinPipe: true,
    attach(started) {
      agent = started;
      driver = drive(launch, host);
    },
    stdout: (line) => driver?.stdout(line),
    stderr: (line) => driver?.stderr?.(line),
    stop() {
      // The driver sends session/cancel; the agent gets a grace to answer it before its group is ended.
      stopping.abort();
      endAfterGrace();
    },
    async finish(exit) {
      if (ending) clearTimeout(ending);
      if (!driver) return {};
      return driver.finish(exit);
    },
  };
}

/** A question in the task directory, so that any front end (`caesar acp`, `caesar answer`) can answer it. */
function makeAskPerson(context: AgentStreamContext, until: number, signal: AbortSignal) {
  return async (question: string, options: string[], tool?: ToolPreview): Promise<string | undefined> => {
    const asked = await askQuestion(context.dir, context.taskId, question, options, tool);
    const answer = await waitForAnswer(context.dir, asked.id, Math.max(0, until - Date.now()), signal);
    return answer?.answer;
  };
}
