import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { lockHolder } from "../../src/support/lock.js";
import { isProcessAlive } from "../../src/support/process.js";
import { type CliResult, runCaesar } from "./cli.js";
import {
  cloneOf,
  freePort,
  makeSharedRemote,
  NatsServer,
  tempDir,
  type WorkerProcess,
  workerIn,
} from "./cluster.js";

const MINUTE = 60_000;

export interface LabOptions {
  /** The temporary directory's prefix (caesar-cluster-<name>-). */
  name: string;
  /** The shared repository's committed `.caesar/config.toml`, given the lab's directory. */
  config(dir: string): string;
  /** More nats-server options (authentication), given the lab's directory. */
  serverArgs?(dir: string): string[];
}

/**
 * A cluster suite's lab: a real nats-server, a shared bare remote whose committed configuration the
 * suite gives, a submitter's clone with its own home, and workers each in their own clone and home.
 * `stop()` ends what it started: the workers, the submitter's relay, the server.
 */
export class ClusterLab {
  readonly workers: WorkerProcess[] = [];
  remote = "";
  submitter = "";
  home = "";

  private constructor(
    readonly dir: string,
    readonly server: NatsServer,
  ) {}

  static async start(natsServer: string, options: LabOptions): Promise<ClusterLab> {
    const dir = tempDir(`caesar-cluster-${options.name}-`);
    const server = new NatsServer(natsServer, await freePort(), dir, options.serverArgs?.(dir) ?? []);
    await server.start();
    const lab = new ClusterLab(dir, server);
    lab.remote = makeSharedRemote(dir, options.config(dir));
    lab.submitter = cloneOf(lab.remote, join(dir, "submitter"));
    lab.home = join(dir, "home");
    mkdirSync(lab.home, { recursive: true });
    return lab;
  }

  get url(): string {
    return this.server.url;
  }

  /** `caesar <args>` in the submitter's clone, as its user (another home: another user). */
  caesar(args: string[], home = this.home): Promise<CliResult> {
    return runCaesar(args, {
      cwd: this.submitter,
      env: { HOME: home, XDG_CONFIG_HOME: join(home, ".config") },
      timeoutMs: 2 * MINUTE,
    });
  }

  /** A worker in its own clone and home, on this lab's server (`--on` added); started unless told not to. */
  async worker(name: string, args: string[], options: { start?: boolean } = {}): Promise<WorkerProcess> {
    const worker = workerIn(this.dir, this.remote, name, ["--on", this.url, ...args]);
    this.workers.push(worker);
    if (options.start !== false) await worker.start();
    return worker;
  }

  /** The end of every worker's log, for a failure's message. */
  logs(): string {
    return this.workers
      .map(
        (w) => `--- ${w.name}\n${existsSync(w.logPath) ? readFileSync(w.logPath, "utf8").slice(-3000) : ""}`,
      )
      .join("\n");
  }

  async stop(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.stop()));
    const relay = this.submitter
      ? lockHolder(join(this.submitter, ".caesar", "state", "relay.lock"))
      : undefined;
    if (relay !== undefined && isProcessAlive(relay.pid)) process.kill(relay.pid, "SIGTERM");
    await this.server.stop();
  }
}
