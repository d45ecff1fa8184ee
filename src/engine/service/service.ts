import { existsSync } from "node:fs";
import { chmod, mkdir, readdir, readFile, rm } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { isValidTaskId } from "../../protocol/ids.js";
import { writeJsonAtomic } from "../../support/atomic-file.js";
import { CaesarError, diskFullError, messageOf } from "../../support/errors.js";
import { acquireLock, type HeldLock } from "../../support/lock.js";
import { isProcessAlive, recordProcess } from "../../support/process.js";
import { flushTelemetry, telemetryCounters } from "../../support/telemetry/spans.js";
import { brokerSocketOf } from "../conductor/broker-files.js";
import { type ConductOptions, conduct } from "../conductor/conductor.js";
import { BUILD_ID } from "../conductor/service-client.js";
import {
  MAX_SERVICE_LINE,
  type ServiceInfo,
  type ServicePaths,
  type ServiceRequest,
  ServiceRequestSchema,
  type ServiceResponse,
  type ServiceStatus,
  servicePaths,
  socketPathFor,
} from "../conductor/service-files.js";
import { TaskBroker } from "../conductor/task-broker.js";
import { finishAfterFault, finishUnconducted } from "../lifecycle/finish-stranded.js";
import { listIncompleteTasks, rollBackIncomplete } from "../lifecycle/incomplete.js";
import { settleRace } from "../race/race.js";
import { controlPaths, controlTaskPaths } from "../store/control.js";
import type { SlotHolder, TaskState } from "../store/state.js";
import { appendTaskText } from "../store/task-files.js";
import { loadPlan } from "../store/task-plan.js";
import { catchUpFinishedMirror, readState, taskDirOf } from "../store/task-store.js";
import { SlotPool } from "./slot-pool.js";

export interface ServiceOptions {
  /** Exit after this long with no task and no request (ms). */
  idleMs: number;
  /** The service's own log lines (its output goes to service.log). */
  log: (line: string) => void;
  /**
   * Hook the process's stop signals (SIGTERM, SIGINT): the service then stops at once, its agents left to
   * the next service.
   */
  onSignal?: (stop: () => void) => void;
}

/** How often the service looks at every task of the project (tasks no one told it about, cancels). */
const SCAN_MS = 2_000;

interface RunningTask {
  cancel: AbortController;
  since: string;
  claimed: Promise<void>;
  phase: () => string;
}

/**
 * The conductor service: one long-lived process per project (per git common directory) that conducts every
 * local task of the project — its slot, its isolation, its agent, attempts and checks, its end — as a
 * cluster worker conducts many. Front ends create a task's records, then tell the service over its socket;
 * the task directory stays the interface everyone reads.
 *
 * It is the only one: it holds the project's service lock for its whole life (a second one exits at once).
 * It adopts every unfinished task whose conductor is gone — its agent, which writes its output to files,
 * outlived it — and exits after an idle period.
 */
/** How long an exiting service waits for its last spans to reach their collector. */
const EXIT_FLUSH_MS = 2000;

export async function runService(root: string, options: ServiceOptions): Promise<"ran" | "already_running"> {
  const paths = servicePaths(root);
  await mkdir(paths.dir, { recursive: true, mode: 0o700 });
  await chmod(paths.dir, 0o700);
  let lock: HeldLock;
  try {
    lock = await acquireLock(paths.lock, { timeoutMs: 0 });
  } catch {
    return "already_running";
  }
  const service = new ConductorService(root, paths, lock, options);
  await service.run();
  return "ran";
}

class ConductorService {
  private readonly running = new Map<string, RunningTask>();
  private readonly finished = new Set<string>();
  /** Tasks whose conductor stopped on a full disk: finished, failed, once caesar can write again. */
  private readonly waitingForSpace = new Map<string, { dir: string; fault: CaesarError }>();
  private readonly dirs = new Map<string, string>();
  private readonly pool: SlotPool;
  private foreign: SlotHolder[] = [];
  private maxParallel = 1;
  private server: Server | undefined;
  private socketPath = "";
  private stopping = false;
  private lastActivity = Date.now();
  private connections = 0;
  private ticks = 0;
  private readonly startedAt = new Date().toISOString();
  private ended!: () => void;
  private droppedLogged = 0;

  constructor(
    private readonly root: string,
    private readonly paths: ServicePaths,
    private readonly lock: HeldLock,
    private readonly options: ServiceOptions,
  ) {
    this.pool = new SlotPool(() => this.foreign);
  }

  async run(): Promise<void> {
    const over = new Promise<void>((resolve) => {
      this.ended = resolve;
    });
    await this.listen();
    this.options.onSignal?.(() => void this.stop(true));
    this.options.log(
      `[service] ${process.pid} conducts the tasks of ${this.root} (socket ${this.socketPath})`,
    );
    await this.scan();
    const timer = setInterval(() => void this.tick(), SCAN_MS);
    await over;
    clearInterval(timer);
  }

  private async listen(): Promise<void> {
    this.socketPath = socketPathFor(this.paths);
    // Only the lock's holder gets here: a socket file left there is a dead service's.
    await rm(this.socketPath, { force: true });
    const server = createServer((socket) => this.accept(socket));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.socketPath, () => resolve());
    });
    server.on("error", (error) => this.options.log(`[service] socket: ${messageOf(error)}`));
    await chmod(this.socketPath, 0o600);
    this.server = server;
    const info: ServiceInfo = {
      ...recordProcess(process.pid),
      socket: this.socketPath,
      build: BUILD_ID,
      started_at: this.startedAt,
    };
    await writeJsonAtomic(this.paths.info, info, { mode: 0o600 });
  }

  private accept(socket: Socket): void {
    this.connections += 1;
    this.lastActivity = Date.now();
    let text = "";
    let answered = false;
    socket.setEncoding("utf8");
    socket.on("error", () => {});
    socket.on("close", () => {
      this.connections -= 1;
      this.lastActivity = Date.now();
    });
    socket.on("data", (chunk: string) => {
      if (answered) return;
      text += chunk;
      if (text.length > MAX_SERVICE_LINE) {
        answered = true;
        this.reply(socket, { ok: false, code: "invalid_request", message: "request too long" });
        return;
      }
      const end = text.indexOf("\n");
      if (end === -1) return;
      answered = true;
      let request: ServiceRequest;
      try {
        request = ServiceRequestSchema.parse(JSON.parse(text.slice(0, end)));
      } catch (error) {
        this.reply(socket, { ok: false, code: "invalid_request", message: messageOf(error) });
        return;
      }
      void this.handle(request).then(
        (response) => this.reply(socket, response),
        (error: unknown) =>
          this.reply(socket, { ok: false, code: "service_error", message: messageOf(error) }),
      );
    });
  }

  private reply(socket: Socket, response: ServiceResponse): void {
    socket.end(`${JSON.stringify(response)}\n`);
  }

  private async handle(request: ServiceRequest): Promise<ServiceResponse> {
    switch (request.op) {
      case "status":
        return { ok: true, status: this.status() };
      case "conduct": {
        if (this.stopping)
          return {
            ok: false,
            code: "service_stopping",
            message: "this service is stopping; a new one takes the task",
          };
        const task = this.running.get(request.task) ?? (await this.take(request.task));
        if (!task) return { ok: true, known: false };
        await task.claimed;
        return { ok: true, known: true };
      }
      case "cancel": {
        const task = this.running.get(request.task);
        task?.cancel.abort();
        return { ok: true, known: task !== undefined };
      }
      case "stop":
        setImmediate(() => void this.stop(request.now));
        return { ok: true, status: this.status() };
    }
  }

  status(): ServiceStatus {
    return {
      pid: process.pid,
      started_at: this.startedAt,
      build: BUILD_ID,
      tasks: [...this.running.entries()].map(([id, task]) => ({
        id,
        phase: task.phase(),
        since: task.since,
      })),
      slots: { used: this.pool.list().length, max: this.maxParallel },
      stopping: this.stopping,
      telemetry: telemetryCounters(),
    };
  }

  /**
   * Start conducting a task if it is this service's to conduct: local, unfinished, and not conducted by
   * another live process. One whose conductor is gone is adopted where it stands.
   */
  private async take(id: string): Promise<RunningTask | undefined> {
    // (Not the scan's cache of finished tasks: a task asked for is looked at again.)
    if (this.stopping || this.running.has(id)) return this.running.get(id);
    if (this.waitingForSpace.has(id)) return undefined;
    let dir: string;
    let state: TaskState;
    try {
      dir = await this.dirOf(id);
      state = await readState(dir);
      if (state.phase === "finished") {
        this.finished.add(id);
        return undefined;
      }
      // A remote task is its relay's; a task a cluster worker runs in this clone is the worker's. (A plan
      // that cannot be read is conducted all the same: its conductor finishes it, saying why.)
      if (state.remote || (await loadPlan(dir).catch(() => undefined))?.remote) {
        this.finished.add(id);
        return undefined;
      }
    } catch {
      return undefined; // being created, or unreadable: looked at again on the next scan
    }
    if (this.running.has(id)) return this.running.get(id);
    const conductor = state.conductor;
    if (conductor && conductor.pid !== process.pid && isProcessAlive(conductor)) return undefined;
    return this.start(
      id,
      state.root,
      dir,
      state.phase !== "queued",
      state.phase !== "queued" || conductor !== null,
    );
  }

  /**
   * A task's directory, from caesar's record of it: projects with a `.caesar/` of their own can share one
   * git repository, hence one control directory and one service; each task's record says whose it is.
   */
  private async dirOf(id: string): Promise<string> {
    const known = this.dirs.get(id);
    if (known) return known;
    const record = JSON.parse(await readFile(controlTaskPaths(this.root, id).state, "utf8")) as {
      root?: unknown;
    };
    if (typeof record.root !== "string") throw new Error(`${id}: its record names no project`);
    const dir = taskDirOf(record.root, id);
    this.dirs.set(id, dir);
    return dir;
  }

  private start(id: string, root: string, dir: string, ran: boolean, adopt: boolean): RunningTask {
    const cancel = new AbortController();
    let claimed!: () => void;
    let phase = "queued";
    const task: RunningTask = {
      cancel,
      since: new Date().toISOString(),
      claimed: new Promise<void>((resolve) => {
        claimed = resolve;
      }),
      phase: () => phase,
    };
    this.running.set(id, task);
    this.lastActivity = Date.now();
    const log = join(dir, "conductor.log");
    const brokers: TaskBroker[] = [];
    const options: ConductOptions = {
      signal: cancel.signal,
      adopt,
      log: (line) => void appendTaskText(log, `${line}\n`).catch(() => undefined),
      onClaimed: (state) => {
        phase = state.phase;
        claimed();
      },
      takeSlot: (taskId, plan, max, onWait, signal, adopted) => {
        this.maxParallel = max;
        phase = "waiting for a slot";
        return this.pool
          .take(taskId, plan.parent_id, () => this.maxParallel, onWait, signal, adopted)
          .then((release) => {
            phase = "running";
            return release;
          });
      },
      settled: (plan, final) => (plan.race ? settleRace(plan.root, plan.race, final) : Promise.resolve()),
      openBroker: async (taskId, taskDir, plan) => {
        const broker = new TaskBroker(
          taskId,
          taskDir,
          plan,
          brokerSocketOf(controlTaskPaths(root, taskId).dir),
          this.options.log,
        );
        await broker.listen();
        brokers.push(broker);
        return broker.socketPath;
      },
    };
    if (adopt) this.options.log(`[service] ${id}: taking it over from a conductor that is gone`);
    // Its agent may run: its place is counted now, before anything queued can take it.
    const claimedPlace = ran ? this.pool.claim(id) : undefined;
    void appendTaskText(
      log,
      `[caesar service ${process.pid}] ${adopt ? "took over" : "conducts"} ${id}\n`,
    ).catch(() => undefined);
    conduct(root, id, options)
      .catch(async (error: unknown) => {
        const full = diskFullError(error);
        if (full) {
          const fault = new CaesarError("disk_full", full.message, {
            detail:
              "caesar could not write the task's records, and finished it as soon as it could again. Free some space before running it again; its worktree is kept.",
          });
          this.waitingForSpace.set(id, { dir, fault });
          this.options.log(`[service] ${id}: ${full.message} It is finished once caesar can write again.`);
          return;
        }
        // The last resort always leaves a trace: the service's log, the task's conductor.log, and — when
        // its state can still be written — a final state naming why.
        const why = error instanceof Error ? (error.stack ?? error.message) : String(error);
        this.options.log(`[service] ${id}: ${why}`);
        await appendTaskText(log, `[caesar service ${process.pid}] could not conduct ${id}: ${why}\n`).catch(
          () => undefined,
        );
        await finishUnconducted(dir, error).catch(() => undefined);
      })
      .finally(() => {
        for (const broker of brokers) broker.close();
        claimedPlace?.();
        claimed();
        this.running.delete(id);
        this.lastActivity = Date.now();
        this.pool.wakeAll();
        if (this.stopping && this.running.size === 0) void this.exit();
      });
    return task;
  }

  /** Every task of the project: the ones to take (no one told this service, or their conductor died), cancels. */
  private async scan(): Promise<void> {
    const foreign: SlotHolder[] = [];
    // Tasks whose agent already ran come first: they hold their slots before a queued task can take one.
    const queued: string[] = [];
    for (const id of await this.listTasks()) {
      if (this.finished.has(id) || this.waitingForSpace.has(id)) continue;
      const dir = await this.dirOf(id).catch(() => undefined);
      if (!dir) continue;
      const running = this.running.get(id);
      if (running) {
        const state = await readState(dir).catch(() => undefined);
        if (state?.cancel_requested) running.cancel.abort();
        continue;
      }
      const state = await readState(dir).catch(() => undefined);
      if (!state || state.phase === "finished" || state.remote) {
        if (state) this.finished.add(id);
        // Finished by a conductor killed before it wrote the task directory's copy: written now.
        if (state?.phase === "finished" && (await catchUpFinishedMirror(dir).catch(() => false)))
          this.options.log(`[service] ${id}: its state.json caught up with its finished record`);
        continue;
      }
      const conductor = state.conductor;
      if (conductor && conductor.pid !== process.pid && isProcessAlive(conductor)) {
        if (state.phase !== "queued")
          foreign.push({ task_id: id, pid: conductor.pid, since: state.started_at ?? state.created_at });
        continue;
      }
      if (state.phase === "queued") queued.push(id);
      else if (!this.stopping) await this.take(id);
    }
    this.foreign = foreign;
    for (const id of queued) if (!this.stopping) await this.take(id);
  }

  /**
   * Tasks stopped by a full disk: each is tried again at every tick, and finished — stopped, failed, with
   * `disk_full` and its report — as soon as caesar can write its records (never taken for a rewrite of
   * them: a mirror caesar could not write was removed, not left stale).
   */
  private async finishWhereSpaceReturned(): Promise<void> {
    for (const [id, { dir, fault }] of this.waitingForSpace) {
      try {
        await finishAfterFault(dir, fault);
      } catch (error) {
        if (diskFullError(error)) continue;
        this.options.log(`[service] ${id}: could not finish it after a full disk: ${messageOf(error)}`);
        await finishUnconducted(dir, fault).catch(() => undefined);
      }
      this.waitingForSpace.delete(id);
      this.finished.add(id);
      this.lastActivity = Date.now();
      this.options.log(`[service] ${id}: finished, failed (disk_full), now that caesar can write again`);
    }
  }

  private async takeBackIncomplete(): Promise<void> {
    for (const task of await listIncompleteTasks(this.root)) {
      if (!task.abandoned) continue;
      await rollBackIncomplete(this.root, task.id);
      this.options.log(
        `[service] ${task.id}: never fully created (its front end died while creating it); taken back`,
      );
    }
  }

  /** Every task caesar has a record of in this control directory. */
  private async listTasks(): Promise<string[]> {
    try {
      return (await readdir(controlPaths(this.root).tasks)).filter((name) => isValidTaskId(name));
    } catch {
      return [];
    }
  }

  private async tick(): Promise<void> {
    if (!existsSync(controlPaths(this.root).dir)) {
      this.options.log("[service] the project is gone: exiting");
      await this.stop(true);
      return;
    }
    await this.finishWhereSpaceReturned();
    await this.scan().catch((error: unknown) => this.options.log(`[service] scan: ${messageOf(error)}`));
    // Now and then: tasks a front end died while creating are taken back (their budget place freed).
    if (++this.ticks % 15 === 0) await this.takeBackIncomplete().catch(() => undefined);
    this.pool.wakeAll();
    this.logDroppedSpans();
    const idle = this.running.size === 0 && this.waitingForSpace.size === 0 && this.connections === 0;
    if (idle && Date.now() - this.lastActivity >= this.options.idleMs) {
      this.options.log(`[service] idle for ${Math.round(this.options.idleMs / 1000)} s: exiting`);
      await this.stop(false);
    }
  }

  /**
   * Stop taking tasks: the lock, the socket and service.json go at once, so a new service can start for new
   * tasks. After its tasks end — or now, leaving their agents running for the next service to take over.
   */
  async stop(now: boolean): Promise<void> {
    if (!this.stopping) {
      this.stopping = true;
      this.options.log(`[service] stopping${now ? " now" : " after its tasks"}`);
      this.server?.close();
      await this.removeOwnFiles();
      try {
        this.lock.release();
      } catch {
        // Left behind: its holder (this process) is recorded, and gone once it exits.
      }
    }
    if (now || this.running.size === 0) await this.exit();
  }

  private async removeOwnFiles(): Promise<void> {
    try {
      const info = JSON.parse(await readFile(this.paths.info, "utf8")) as { pid?: number };
      if (info.pid === process.pid) await rm(this.paths.info, { force: true });
    } catch {
      // gone already
    }
    await rm(this.socketPath, { force: true }).catch(() => undefined);
  }

  private async exit(): Promise<void> {
    // The spans of the last tasks, for a bounded time: a collector that never answers does not keep it.
    await flushTelemetry(EXIT_FLUSH_MS);
    this.logDroppedSpans();
    this.ended();
  }

  /** Spans lost since the last time it said so (a collector down or slow), in the service's log. */
  private logDroppedSpans(): void {
    const counters = telemetryCounters();
    if (!counters || counters.dropped === this.droppedLogged) return;
    this.options.log(
      `[service] telemetry: ${counters.dropped - this.droppedLogged} span(s) dropped (${counters.dropped} in all, ${counters.exported} exported)${counters.last_error ? `; last export error: ${counters.last_error}` : ""}`,
    );
    this.droppedLogged = counters.dropped;
  }
}
