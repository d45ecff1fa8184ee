import { spawn } from "node:child_process";
import { closeSync, existsSync, openSync, writeFileSync } from "node:fs";
import { mkdir, readFile, rm } from "node:fs/promises";
import type { ProcessExit } from "../../agents/adapter.js";
import { isGroupAlive, isProcessAlive, type RecordedProcess } from "../../support/process.js";
import { ChangeWatch } from "../store/change-watch.js";
import { type AgentFiles, type OutputCursor, OutputReader, type OutputSink } from "./agent-output.js";
import { findExecutable } from "./executable.js";
import { terminateGroup } from "./terminate.js";

export type AgentExit = ProcessExit & { spawnError?: NodeJS.ErrnoException };

/** An agent's process group, started here or adopted from a conductor that is gone. */
export interface AgentProcess {
  /** The keeper's pid: the leader of the agent's process group. */
  pid: number | undefined;
  /** Resolves once the agent has exited, whatever was left of its group ended, and its output handled. */
  done: Promise<AgentExit>;
  /** End the whole process group (SIGTERM, grace, SIGKILL). */
  terminate(): Promise<void>;
  /** Write to the agent's stdin (with `stdinPipe`); a closed pipe drops the text (the exit says why). */
  write(text: string): void;
  /** Close the agent's stdin (with `stdinPipe`): the end of the conversation. */
  closeStdin(): void;
}

export interface AgentProcessOptions {
  bin: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  files: AgentFiles;
  /** Where the output goes, chunk by chunk (raw.log, the stream translator). */
  sink: OutputSink;
  /**
   * raw.log's open file, for an agent whose translator reads none of its output as it comes (a plain-text
   * agent): its stdout and stderr are then that file itself, appended to by the agent with no copy by
   * caesar, and `sink` gets nothing. A marker file says so to a conductor taking the agent over.
   */
  direct?: number;
  /** Keep stdin open as a pipe (a session driven over stdio, ACP): such an agent ends with its conductor. */
  stdinPipe?: boolean;
}

/**
 * The agent's keeper: a POSIX shell that runs the agent in the foreground and writes its exit status to a
 * file. The agent's stdout and stderr are files too, so nothing the agent needs is held by the conductor:
 * a conductor that dies (`kill -9`, OOM, an upgrade) leaves the agent working, and the next one reads the
 * rest of its output and its status from the files (adoptAgentProcess). The keeper catches SIGTERM, SIGINT
 * and SIGHUP (sent to the whole group, so the agent gets them too) only to outlive the agent and record how
 * it ended; a caught signal is reset to its default in the agent by exec, so the agent sees them as usual.
 * A status above 128 is a signal's (128 + its number), as every shell reports it.
 */
const KEEPER = `exit_file=$1; shift
trap : TERM INT HUP
"$@"
status=$?
printf '%s\\n' "$status" > "$exit_file"
exit "$status"`;

/**
 * Start the agent in a process group of its own (so the group can be ended as one) under its keeper, stdin
 * from /dev/null (or a pipe, for a session), stdout and stderr into this turn's files, read back as they
 * grow.
 */
export async function startAgentProcess(options: AgentProcessOptions): Promise<AgentProcess> {
  const { files } = options;
  // Found first, as spawning it directly would: the keeper would only say "not found" in its stderr.
  const found = findExecutable(options.bin, options.env.PATH ?? process.env.PATH ?? "", options.cwd);
  if (!found.ok) return failedToStart(found.error);
  await mkdir(files.dir, { recursive: true, mode: 0o700 });
  await Promise.all(
    [files.stdout, files.stderr, files.exit, files.cursor, files.direct].map((path) =>
      rm(path, { force: true }),
    ),
  );
  if (options.direct !== undefined) writeFileSync(files.direct, "", { mode: 0o600 });
  const stdout = options.direct ?? openSync(files.stdout, "a", 0o600);
  const stderr = options.direct ?? openSync(files.stderr, "a", 0o600);
  let child: ReturnType<typeof spawn>;
  try {
    child = spawn("/bin/sh", ["-c", KEEPER, "caesar-agent", files.exit, found.path, ...options.args], {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: [options.stdinPipe ? "pipe" : "ignore", stdout, stderr],
    });
  } catch (error) {
    return failedToStart(error as NodeJS.ErrnoException);
  } finally {
    if (options.direct === undefined) {
      closeSync(stdout);
      closeSync(stderr);
    }
  }
  // An agent that dies closes its stdin: writing then fails with EPIPE, which its exit explains.
  child.stdin?.on("error", () => {});
  const pgid = child.pid;
  const keeperExit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: Error }>(
    (resolve) => {
      child.once("error", (error) => resolve({ code: null, signal: null, error }));
      child.once("exit", (code, signal) => resolve({ code, signal }));
    },
  );
  if (pgid === undefined) {
    const exit = await keeperExit;
    return failedToStart((exit.error ?? new Error("spawn failed")) as NodeJS.ErrnoException);
  }
  const reader =
    options.direct === undefined
      ? new OutputReader(files, options.sink, { stdout: 0, stderr: 0, raw: 0 })
      : undefined;
  const done = follow(
    reader,
    files,
    pgid,
    keeperExit.then(() => undefined),
  );
  return {
    pid: pgid,
    done,
    terminate: () => terminateGroup(pgid).then(() => undefined),
    write(text) {
      if (child.stdin?.writable) child.stdin.write(text);
    },
    closeStdin() {
      child.stdin?.end();
    },
  };
}

export interface AdoptOptions {
  /** The keeper as caesar recorded it (`state.agent_process`). */
  keeper: RecordedProcess;
  files: AgentFiles;
  sink: OutputSink;
  /** Where the previous conductor had got to; what comes before is replayed (sink.replay), not handled again. */
  cursor: OutputCursor;
}

/**
 * Take over an agent whose conductor is gone: replay the output already handled into the sink (so a stream
 * translator gets its state back without emitting events twice), then follow the rest of it and the
 * keeper's exit as startAgentProcess does. This process is not the keeper's parent: its exit is seen by
 * polling, and its status read from the exit file.
 */
export async function adoptAgentProcess(options: AdoptOptions): Promise<AgentProcess> {
  const { keeper, files } = options;
  // An agent whose output went straight into raw.log left nothing to replay nor to read.
  const reader = isDirect(files) ? undefined : new OutputReader(files, options.sink, options.cursor);
  await reader?.replay();
  const gone = (async () => {
    const watch = new ChangeWatch(files.dir, { pollMs: 200 });
    try {
      while (isProcessAlive(keeper) && (await readExitFile(files.exit)) === undefined) await watch.next(200);
    } finally {
      watch.close();
    }
  })();
  return {
    pid: keeper.pid,
    done: follow(reader, files, keeper.pid, gone),
    terminate: () => terminateGroup(keeper.pid).then(() => undefined),
    write() {},
    closeStdin() {},
  };
}

/**
 * Read the output as it grows until the keeper has exited; then end whatever is left of the group (a
 * grandchild still writing), read the rest, and resolve with how the agent ended.
 */
async function follow(
  reader: OutputReader | undefined,
  files: AgentFiles,
  pgid: number,
  keeperGone: Promise<void>,
): Promise<AgentExit> {
  let exited = false;
  const gone = keeperGone.then(() => {
    exited = true;
    reader?.wake();
  });
  if (reader) await reader.readUntil(() => exited);
  else await gone;
  // What the agent started may still run: a moment to end by itself, then the group is ended.
  if (!(await groupGoneWithin(pgid, LINGER_MS))) await terminateGroup(pgid);
  await reader?.drain();
  reader?.close();
  const status = await readExitFile(files.exit);
  return statusToExit(status);
}

/** Did this run of the agent write its output straight into raw.log (startAgentProcess's `direct`)? */
export function isDirect(files: AgentFiles): boolean {
  return existsSync(files.direct);
}

/** The status the keeper wrote (undefined until it has, or when it was killed before it could). */
export async function readExitFile(path: string): Promise<number | undefined> {
  const text = await readFile(path, "utf8").catch(() => "");
  const match = /^(\d{1,3})\n$/.exec(text);
  return match ? Number(match[1]) : undefined;
}

const SIGNAL_NAMES: Record<number, NodeJS.Signals> = {
  1: "SIGHUP",
  2: "SIGINT",
  3: "SIGQUIT",
  6: "SIGABRT",
  9: "SIGKILL",
  11: "SIGSEGV",
  13: "SIGPIPE",
  14: "SIGALRM",
  15: "SIGTERM",
};

/** A shell's status as a process exit: above 128, the signal that ended it; none, killed with its keeper. */
export function statusToExit(status: number | undefined): ProcessExit {
  if (status === undefined) return { code: null, signal: "SIGKILL" };
  if (status > 128 && SIGNAL_NAMES[status - 128]) return { code: null, signal: SIGNAL_NAMES[status - 128]! };
  return { code: status, signal: null };
}

function failedToStart(error: NodeJS.ErrnoException): AgentProcess {
  return {
    pid: undefined,
    done: Promise.resolve({ code: null, signal: null, spawnError: error }),
    terminate: async () => {},
    write() {},
    closeStdin() {},
  };
}

/** How long what an agent started may outlive its keeper before its group is ended. */
const LINGER_MS = 300;

/**
 * Is the group gone within `ms`? Looked at again and again (after 5 ms, then twice as long each time),
 * not once at the end: a sandbox's namespace is torn down a few milliseconds after its keeper exits (its
 * init and relay still members then), and a fixed wait of the whole grace cost every sandboxed task 300 ms.
 */
async function groupGoneWithin(pgid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  let step = 5;
  while (isGroupAlive(pgid)) {
    const left = deadline - Date.now();
    if (left <= 0) return false;
    await delay(Math.min(step, left));
    step *= 2;
  }
  return true;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
