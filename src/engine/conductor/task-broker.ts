import { type ChildProcess, spawn } from "node:child_process";
import { realpathSync } from "node:fs";
import { chmod, mkdir, rm } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { constants } from "node:os";
import { resolve } from "node:path";
import { CAESAR_ENV_NAMES, TASK_TOKEN_ENV } from "../../protocol/task-dir.js";
import { messageOf } from "../../support/errors.js";
import { CAESAR_BIN } from "../../support/package-paths.js";
import type { TaskPlan } from "../store/task-plan.js";
import { readState } from "../store/task-store.js";
import { BROKER_CALLER_ENV, BROKER_ENV } from "./broker-files.js";
import {
  BROKERED_COMMANDS,
  type BrokerRequest,
  BrokerRequestSchema,
  encodeFrame,
  FrameReader,
  MAX_FRAME_BYTES,
} from "./broker-wire.js";
import { readTaskEnvironment } from "./task-env.js";

/**
 * A sandboxed task's one door to caesar: a Unix socket in a folder of the control directory that only this
 * task's sandbox has bound (every other task's, and the service's own socket, are hidden from it). A
 * request that arrives here is this task's — the channel says so; no token, no process walk, nothing the
 * agent sets — and runs as a `caesar` command outside the sandbox, as its own child, which the caller
 * proof of engine/lifecycle/caller.ts recognises (its parent is the conductor — the project's service, or
 * the cluster worker conducting the task — which named its caller). Policy, depth, budget and subtree are
 * then checked as for any nested request.
 */
export class TaskBroker {
  private server: Server | undefined;
  private readonly helpers = new Set<ChildProcess>();

  constructor(
    private readonly taskId: string,
    private readonly dir: string,
    private readonly plan: TaskPlan,
    readonly socketPath: string,
    private readonly log: (line: string) => void,
  ) {}

  async listen(): Promise<void> {
    const folder = resolve(this.socketPath, "..");
    await mkdir(folder, { recursive: true, mode: 0o700 });
    await chmod(folder, 0o700);
    // Only this task's conductor listens here: a socket file left there is a dead service's.
    await rm(this.socketPath, { force: true });
    const server = createServer((socket) => this.accept(socket));
    await new Promise<void>((done, fail) => {
      server.once("error", fail);
      server.listen(this.socketPath, () => done());
    });
    server.on("error", (error) => this.log(`[broker ${this.taskId}] ${messageOf(error)}`));
    await chmod(this.socketPath, 0o600);
    this.server = server;
  }

  close(): void {
    this.server?.close();
    for (const helper of this.helpers) helper.kill("SIGTERM");
  }

  private accept(socket: Socket): void {
    const reader = new FrameReader(true);
    let helper: ChildProcess | undefined;
    let failed = false;
    // Frames that arrive before the command has started wait for it (bounded: the peer is untrusted).
    const queued: { kind: string; data: Buffer }[] = [];
    let queuedBytes = 0;
    const refuse = (message: string) => {
      failed = true;
      socket.end(Buffer.concat([encodeFrame("e", `caesar: ${message}\n`), encodeFrame("x", "2")]));
    };
    const deliver = (frame: { kind: string; data: Buffer }) => {
      if (!helper) {
        queuedBytes += frame.data.length;
        if (queuedBytes > MAX_FRAME_BYTES) socket.destroy();
        else queued.push(frame);
        return;
      }
      if (frame.kind === "i") helper.stdin?.write(frame.data);
      else if (frame.kind === "c") helper.stdin?.end();
    };
    socket.on("error", () => helper?.kill("SIGTERM"));
    socket.on("close", () => helper?.kill("SIGTERM"));
    socket.on("data", (chunk: Buffer) => {
      if (failed) return;
      let parsed: ReturnType<FrameReader["push"]>;
      try {
        parsed = reader.push(chunk);
      } catch (error) {
        socket.destroy();
        helper?.kill("SIGTERM");
        this.log(`[broker ${this.taskId}] refused a connection: ${messageOf(error)}`);
        return;
      }
      if (parsed.request !== undefined) {
        void this.start(parsed.request).then(
          (child) => {
            helper = child;
            this.pipe(child, socket);
            for (const frame of queued.splice(0)) deliver(frame);
          },
          (error: unknown) => refuse(messageOf(error)),
        );
      }
      for (const frame of parsed.frames) deliver(frame);
    });
  }

  /** Check a request and start the command it asks for, as this task's nested request. */
  private async start(line: string): Promise<ChildProcess> {
    const request: BrokerRequest = BrokerRequestSchema.parse(JSON.parse(line));
    const [command, sub] = request.argv;
    if (
      !(BROKERED_COMMANDS as readonly string[]).includes(command!) ||
      (command === "mcp" && sub !== "serve")
    )
      throw new Error(
        `\`caesar ${command}\` is not available to a sandboxed agent (available: ${BROKERED_COMMANDS.join(", ")}; \`mcp\` only as \`mcp serve\`).`,
      );
    if (request.argv.some((arg) => arg === "--root" || arg.startsWith("--root=")))
      throw new Error(
        "--root is not available to a sandboxed agent: its requests belong to its own project.",
      );
    if (command === "apply" && this.plan.mode !== "write")
      throw new Error("a read-only task cannot apply a change.");
    const state = await readState(this.dir);
    if (state.phase === "finished") throw new Error(`task ${this.taskId} has finished.`);
    // The environment of the front end that asked for this task, without any task's identity: the one
    // this command runs as is named below, by the service.
    const env: NodeJS.ProcessEnv = { ...((await readTaskEnvironment(this.dir)) ?? process.env) };
    for (const name of [...CAESAR_ENV_NAMES, TASK_TOKEN_ENV, "CAESAR_CHANNEL_TASK_DIR", BROKER_ENV])
      delete env[name];
    env.CAESAR_TASK_ID = this.taskId;
    env[BROKER_CALLER_ENV] = this.taskId;
    const child = spawn(process.execPath, [CAESAR_BIN, ...request.argv], {
      cwd: this.workingDirectory(request.cwd, state.workspace),
      env,
      stdio: [request.stdin ? "pipe" : "ignore", "pipe", "pipe"],
    });
    this.helpers.add(child);
    child.on("exit", () => this.helpers.delete(child));
    child.stdin?.on("error", () => {});
    return child;
  }

  /** The caller's directory when it is its workspace or task directory (or inside), else its workspace. */
  private workingDirectory(asked: string, workspace: string): string {
    try {
      const real = realpathSync(asked);
      for (const base of [workspace, this.dir]) {
        const top = realpathSync(base);
        if (real === top || real.startsWith(`${top}/`)) return real;
      }
    } catch {
      // gone, or not reachable: its workspace
    }
    return workspace;
  }

  private pipe(child: ChildProcess, socket: Socket): void {
    child.stdout?.on("data", (chunk: Buffer) => socket.write(encodeFrame("o", chunk)));
    child.stderr?.on("data", (chunk: Buffer) => socket.write(encodeFrame("e", chunk)));
    child.on("error", (error) => {
      socket.end(Buffer.concat([encodeFrame("e", `caesar: ${error.message}\n`), encodeFrame("x", "1")]));
    });
    child.on("close", (code, signal) => {
      socket.end(encodeFrame("x", String(code ?? (signal ? 128 + (constants.signals[signal] ?? 15) : 1))));
    });
  }
}
