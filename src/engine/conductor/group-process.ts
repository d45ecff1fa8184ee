import { spawn } from "node:child_process";
import type { ProcessExit } from "../../agents/adapter.js";
import { LineBuffer } from "../../protocol/jsonl.js";
import { terminateGroup } from "./terminate.js";

export interface GroupProcessOptions {
  bin: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Where the output goes as it comes (a bounded log for a check, raw.log for setup). */
  raw: { write(chunk: string): unknown };
  onStdoutLine(line: string): void;
  onStderrLine(line: string): void;
  /** Any output at all (for the stall notice). */
  onOutput?(): void;
  /** Keep stdin open as a pipe (a session driven over stdio, ACP); otherwise it is /dev/null. */
  stdinPipe?: boolean;
}

export interface GroupProcess {
  pid: number | undefined;
  /** Resolves when the process has exited and its output is drained (grandchildren holding pipes are ended). */
  done: Promise<ProcessExit & { spawnError?: NodeJS.ErrnoException }>;
  /** End the whole process group (SIGTERM, grace, SIGKILL). */
  terminate(): Promise<void>;
  /** Write to its stdin (with `stdinPipe`); a closed pipe drops the text (the exit says why). */
  write(text: string): void;
  /** Close its stdin (with `stdinPipe`). */
  closeStdin(): void;
}

/**
 * Start a command caesar waits on itself (a check, a setup command) in a process group of its own (so
 * the group can be ended as one), stdin from /dev/null (or a pipe), stdout and stderr teed to `raw` and
 * split into lines. Its output goes through pipes this process holds: it ends with this process. An
 * agent, which must outlive its conductor, is started by agent-process.ts instead.
 */
export function startGroupProcess(options: GroupProcessOptions): GroupProcess {
  const child = spawn(options.bin, options.args, {
    cwd: options.cwd,
    env: options.env,
    detached: true,
    stdio: [options.stdinPipe ? "pipe" : "ignore", "pipe", "pipe"],
  });
  // A process that dies closes its stdin: writing then fails with EPIPE, which its exit explains.
  child.stdin?.on("error", () => {});
  const pgid = child.pid;
  const stdoutLines = new LineBuffer();
  const stderrLines = new LineBuffer();
  child.stdout?.setEncoding("utf8");
  child.stderr?.setEncoding("utf8");
  child.stdout?.on("data", (chunk: string) => {
    options.raw.write(chunk);
    options.onOutput?.();
    for (const line of stdoutLines.push(chunk)) options.onStdoutLine(line);
  });
  child.stderr?.on("data", (chunk: string) => {
    options.raw.write(chunk);
    options.onOutput?.();
    for (const line of stderrLines.push(chunk)) options.onStderrLine(line);
  });

  const done = new Promise<ProcessExit & { spawnError?: NodeJS.ErrnoException }>((resolve) => {
    let settled = false;
    child.once("error", (error: NodeJS.ErrnoException) => {
      if (settled || child.pid !== undefined) return;
      settled = true;
      resolve({ code: null, signal: null, spawnError: error });
    });
    child.once("exit", (code, signal) => {
      // Output may still be in flight, and grandchildren may hold the pipes open forever: give the
      // streams a moment, then end whatever is left of the group so nothing outlives the task.
      const closed = new Promise<void>((r) => child.once("close", () => r()));
      const finish = () => {
        if (settled) return;
        settled = true;
        for (const line of stdoutLines.flush()) options.onStdoutLine(line);
        for (const line of stderrLines.flush()) options.onStderrLine(line);
        resolve({ code, signal });
      };
      void (async () => {
        const early = await Promise.race([closed.then(() => true), delay(300).then(() => false)]);
        if (pgid !== undefined) await terminateGroup(pgid);
        if (!early) {
          const late = await Promise.race([closed.then(() => true), delay(2000).then(() => false)]);
          if (!late) {
            child.stdout?.destroy();
            child.stderr?.destroy();
          }
        }
        finish();
      })();
    });
  });

  return {
    pid: child.pid,
    done,
    async terminate() {
      if (pgid !== undefined) await terminateGroup(pgid);
    },
    write(text: string) {
      if (child.stdin?.writable) child.stdin.write(text);
    },
    closeStdin() {
      child.stdin?.end();
    },
  };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
