import { type ChildProcess, spawn } from "node:child_process";
import { CAESAR_BIN } from "./cli.js";

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  /** The one-time dashboard login URL it printed. */
  loginUrl: string;
  port: number;
  runId: string;
  stderr(): string;
  /** SIGTERM, and wait for the exit. */
  stop(): Promise<number | null>;
}

/** Start the real `caesar serve --json` in `cwd` and wait for its first line (its address). */
export function startServe(
  cwd: string,
  args: string[] = ["--port", "0"],
  env: NodeJS.ProcessEnv = {},
): Promise<ServeProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CAESAR_BIN, "serve", "--json", ...args], {
      cwd,
      env: { ...process.env, NO_COLOR: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`caesar serve did not start\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, 60_000);
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    let started = false;
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
      const newline = stdout.indexOf("\n");
      if (newline === -1 || started) return;
      started = true;
      clearTimeout(timer);
      let facts: { url: string; loginUrl: string; port: number; runId: string };
      try {
        facts = JSON.parse(stdout.slice(0, newline));
      } catch {
        child.kill("SIGKILL");
        reject(new Error(`caesar serve printed no address\nstdout: ${stdout}\nstderr: ${stderr}`));
        return;
      }
      const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
      resolve({
        child,
        url: facts.url,
        loginUrl: facts.loginUrl,
        port: facts.port,
        runId: facts.runId,
        stderr: () => stderr,
        async stop() {
          if (child.exitCode === null) child.kill("SIGTERM");
          return exited;
        },
      });
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`caesar serve exited (${code})\nstdout: ${stdout}\nstderr: ${stderr}`));
    });
  });
}
