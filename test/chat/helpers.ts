import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CAESAR_BIN, type CliResult, runCaesar } from "../helpers/cli.js";

/** A fresh, empty chat root in the system's temp folder. */
export function makeChatRoot(): string {
  return join(mkdtempSync(join(tmpdir(), "caesar-chat-")), "root");
}

/** Run `caesar chat <args> --root <root>` the way a user does. */
export function chat(
  root: string,
  args: string[],
  options: { input?: string; env?: NodeJS.ProcessEnv } = {},
) {
  return runCaesar(["chat", ...args, "--root", root], { timeoutMs: 120_000, ...options });
}

export const FIXTURES = fileURLToPath(new URL("./fixtures/", import.meta.url));

/** A process still running, with its output so far and a promise of its end. */
export interface Running {
  child: ChildProcess;
  done: Promise<CliResult>;
  stdout(): string;
}

/** Start a node script (a fixture, or the caesar binary) without waiting for it. */
export function start(script: string, args: string[], env: NodeJS.ProcessEnv = {}): Running {
  const child = spawn(process.execPath, [script, ...args], {
    env: { ...process.env, NO_COLOR: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done, stdout: () => stdout };
}

/** Start `caesar chat <args> --root <root>` in the background. */
export function startChat(root: string, args: string[], env: NodeJS.ProcessEnv = {}): Running {
  return start(CAESAR_BIN, ["chat", ...args, "--root", root], env);
}

/** Run a fixture script to its end. */
export function runFixture(name: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return start(join(FIXTURES, name), args, env).done;
}

/** Resolve once `predicate` holds, checking every 20 ms (a readiness wait, never a timing assertion). */
export async function until(predicate: () => boolean, what: string, limitMs = 60_000): Promise<void> {
  const started = Date.now();
  while (!predicate()) {
    if (Date.now() - started > limitMs) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
