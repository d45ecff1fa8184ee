import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { CliResult } from "../helpers/cli.js";
import type { Running } from "./helpers.js";

/**
 * The reference implementation of agent-chat, `chat.py` (n24q02m/agent-chat-plugin), run unmodified
 * against caesar: it is third-party code and stays out of the project. Found through
 * AGENT_CHAT_REFERENCE (a path to chat.py), else at ../shared/reference/agent-chat/chat.py from the
 * project's root.
 */
export interface Reference {
  /** The Python interpreter itself (not a version manager's shim, which costs ~0.5 s a call). */
  python: string;
  script: string;
}

const PROJECT_ROOT = fileURLToPath(new URL("../../", import.meta.url));

export function findReference(): Reference | { missing: string } {
  const fromEnv = process.env.AGENT_CHAT_REFERENCE;
  const script = fromEnv ? resolve(fromEnv) : resolve(PROJECT_ROOT, "../shared/reference/agent-chat/chat.py");
  if (!existsSync(script))
    return {
      missing: fromEnv
        ? `AGENT_CHAT_REFERENCE=${fromEnv} does not exist`
        : `the reference chat.py is not at ${script} (set AGENT_CHAT_REFERENCE to its path)`,
    };
  const probe = spawnSync("python3", ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" });
  const python = probe.stdout?.trim();
  if (probe.status !== 0 || !python) return { missing: "python3 is not on the PATH (chat.py needs it)" };
  return { python, script };
}

/** Run `chat.py --root <root> <args>` to its end. */
export function runReference(
  ref: Reference,
  root: string,
  args: string[],
  options: { input?: string } = {},
): Promise<CliResult> {
  return startReference(ref, root, args, options).done;
}

/** Start `chat.py --root <root> <args>` without waiting for it. */
export function startReference(
  ref: Reference,
  root: string,
  args: string[],
  options: { input?: string } = {},
): Running {
  const child = spawn(ref.python, [ref.script, "--root", root, ...args], {
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1", PYTHONIOENCODING: "utf-8" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  child.stdin!.end(options.input ?? "");
  const done = new Promise<CliResult>((resolvePromise, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolvePromise({ code, signal, stdout, stderr }));
  });
  return { child, done, stdout: () => stdout };
}

/** Run a Python fixture that imports the reference's module (its folder on sys.path). */
export function runReferenceScript(ref: Reference, fixture: string, args: string[]): Promise<CliResult> {
  const child = spawn(ref.python, [fixture, resolve(ref.script, ".."), ...args], {
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1", PYTHONIOENCODING: "utf-8" },
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
  return new Promise((resolvePromise, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolvePromise({ code, signal, stdout, stderr }));
  });
}
