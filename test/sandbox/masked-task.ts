import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { type IncomingMessage, request } from "node:http";
import { join } from "node:path";
import { sandboxCommand } from "../../src/engine/conductor/sandbox-run.js";
import { openEgress, type TaskEgress } from "../../src/engine/conductor/task-egress.js";
import type { EventWriter } from "../../src/engine/store/event-log.js";
import type { TaskPlan } from "../../src/engine/store/task-plan.js";
import { KeyDoor } from "../../src/sandbox/key-door.js";
import type { MachineProxies } from "../../src/sandbox/upstream-proxy.js";
import { makeRepo, tempDir } from "../helpers/repo.js";

/**
 * A sandboxed task of claude's whose key (`key`) is masked, in a project of its own, its provider on the
 * host's loopback at `upstreamPort` (under `/anthropic`): its egress opened as its conductor opens it (again
 * for a conductor taking it over), and a Node script started as its agent, in its sandbox.
 */
export function maskedTask(
  closers: (() => void)[],
  upstreamPort: number,
  key: string,
  extraEnv: Record<string, string> = {},
  taskId = "t_masked",
) {
  const root = makeRepo({ "README.md": "# masked\n" });
  const dir = join(root, ".caesar", "tasks", taskId);
  mkdirSync(dir, { recursive: true });
  const plan = {
    root,
    repo_top: root,
    mode: "write",
    network: false,
    sandbox: {
      backend: "bwrap",
      detail: "test",
      cuts_network: true,
      egress: [`127.0.0.1:${upstreamPort}`],
      mask_keys: true,
    },
  } as unknown as TaskPlan;
  const env = {
    PATH: process.env.PATH ?? "",
    HOME: tempDir("caesar-key-home-"),
    ANTHROPIC_API_KEY: key,
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${upstreamPort}/anthropic`,
    ...extraEnv,
  };
  const events: string[] = [];
  const open = async (): Promise<TaskEgress> => {
    const egress = await openEgress(
      root,
      taskId,
      plan,
      { append: async (event: unknown) => void events.push(JSON.stringify(event)) } as unknown as EventWriter,
      () => undefined,
      { product: "claude", env },
    );
    if (!egress) throw new Error("no egress");
    closers.push(() => egress.close());
    return egress;
  };
  const start = (door: TaskEgress["door"], script: string) => {
    const command = sandboxCommand(
      plan,
      { workspace: root, worktree: null },
      dir,
      { bin: process.execPath, args: ["-e", script], cwd: root },
      env,
      { egress: door },
      "claude",
    );
    const child = spawn(command.bin, command.args, { cwd: root, env: command.env });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk));
    child.stderr.on("data", (chunk: Buffer) => (out += chunk));
    const done = new Promise<{ code: number | null; out: string }>((resolve) =>
      child.on("close", (code) => resolve({ code, out })),
    );
    return { command, done, output: () => out };
  };
  return { root, taskId, env, events, open, start };
}

/** A key door on a socket of its own, `placeholder` standing for `key`, closed after the test. */
export async function keyDoorFor(
  closers: (() => void)[],
  upstream: string,
  placeholder: string,
  key: string,
  machine?: MachineProxies,
): Promise<string> {
  const socket = join(tempDir("caesar-key-door-"), "key-0.sock");
  const opened = new KeyDoor(socket, upstream, new Map([[placeholder, key]]), machine);
  await opened.listen();
  closers.push(() => opened.close());
  return socket;
}

/** A request to a door's socket as an agent makes it; its answer, whole (`onFirst`: its first chunk). */
export function askDoor(
  socketPath: string,
  path: string,
  options: {
    headers?: Record<string, string | string[]>;
    body?: string;
    method?: string;
    onFirst?: (chunk: string) => void;
  } = {},
): Promise<{ status: number; headers: IncomingMessage["headers"]; body: string }> {
  const method = options.method ?? (options.body ? "POST" : "GET");
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path, method, headers: options.headers ?? {} }, (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => {
        if (!text) options.onFirst?.(chunk.toString());
        text += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    req.end(options.body ?? "");
  });
}
