import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe } from "vitest";
import type { ClusterAccess } from "../../src/cluster/connection.js";
import { CAESAR_BIN } from "./cli.js";
import { FIXTURE_BIN, git, tempDir } from "./repo.js";
import { locate, NATS_SERVER, standInForMissing } from "./system-deps.js";

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const tick = () => {
      if (check()) return resolve();
      if (Date.now() > deadline) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(tick, 100);
    };
    tick();
  });
}

/** A real `nats-server -js` with file storage in a temporary directory, on a free loopback port. */
export class NatsServer {
  private child: ChildProcess | undefined;
  readonly storeDir: string;
  readonly logPath: string;

  constructor(
    private readonly bin: string,
    readonly port: number,
    dir: string,
    /** More command-line options (authentication, TLS). */
    private readonly extraArgs: string[] = [],
  ) {
    this.storeDir = join(dir, "jetstream");
    this.logPath = join(dir, "nats-server.log");
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  async start(): Promise<void> {
    // "Server is ready" is logged at every start: wait for one more than there was.
    const readyCount = () =>
      existsSync(this.logPath) ? readFileSync(this.logPath, "utf8").split("Server is ready").length - 1 : 0;
    const before = readyCount();
    const log = openSync(this.logPath, "a");
    this.child = spawn(
      this.bin,
      ["-js", "-a", "127.0.0.1", "-p", String(this.port), "-sd", this.storeDir, ...this.extraArgs],
      {
        stdio: ["ignore", log, log],
      },
    );
    await waitFor(() => readyCount() > before, 30_000, "nats-server to be ready");
  }

  /** Stop it (SIGTERM: a clean shutdown, as a restart by systemd would do). */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    await exited;
  }

  async restart(downMs: number): Promise<void> {
    await this.stop();
    await new Promise((resolve) => setTimeout(resolve, downMs));
    await this.start();
  }
}

/** A `caesar worker` process in its own clone with its own home, as on its own machine. */
export class WorkerProcess {
  child: ChildProcess | undefined;
  ready: { id: string; agents: string[]; queue: string; pid: number } | undefined;
  readonly logPath: string;

  constructor(
    readonly name: string,
    readonly clone: string,
    readonly home: string,
    private readonly args: string[],
  ) {
    this.logPath = join(home, "worker.log");
  }

  async start(): Promise<void> {
    const log = openSync(this.logPath, "a");
    const child = spawn(
      process.execPath,
      [CAESAR_BIN, "worker", "--json", "--name", this.name, ...this.args],
      {
        cwd: this.clone,
        env: { ...process.env, HOME: this.home, XDG_CONFIG_HOME: join(this.home, ".config"), NO_COLOR: "1" },
        stdio: ["ignore", "pipe", log],
      },
    );
    this.child = child;
    let out = "";
    this.ready = undefined;
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      const line = out.split("\n").find((l) => l.includes('"ready"'));
      if (line && !this.ready) this.ready = JSON.parse(line);
    });
    await waitFor(() => this.ready !== undefined || child.exitCode !== null, 60_000, `worker ${this.name}`);
    if (!this.ready) throw new Error(`worker ${this.name} exited: ${readFileSync(this.logPath, "utf8")}`);
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  kill9(): void {
    this.child?.kill("SIGKILL");
  }

  /** Ask it to stop as systemd would: drain first, then stop what still runs. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGTERM"), 5_000);
    const hard = setTimeout(() => child.kill("SIGKILL"), 20_000);
    await exited;
    clearTimeout(timer);
    clearTimeout(hard);
  }
}

const GIT_ENV = ["-c", "user.name=test", "-c", "user.email=test@example.com"];

/**
 * The lab's workers run their agents without the OS sandbox unless the suite's configuration says otherwise
 * (each worker has a home of its own, so the test run's global layer does not reach it): the fixture agents
 * record their runs in the lab's directory ($RUNS, $FLAKY_DIR), outside every workspace, which a sandboxed
 * agent cannot write. test/cluster/sandboxed-worker.test.ts runs a worker's agents sandboxed.
 */
const UNSANDBOXED = '[sandbox]\nmode = "off"\n\n';

/**
 * A shared bare remote and its first commit: a project whose committed configuration declares the
 * fixture agents every worker serves.
 */
export function makeSharedRemote(dir: string, config: string): string {
  const remote = join(dir, "remote.git");
  execFileSync("git", ["init", "--quiet", "--bare", "-b", "main", remote]);
  const seed = join(dir, "seed");
  execFileSync("git", ["init", "--quiet", "-b", "main", seed]);
  mkdirSync(join(seed, ".caesar"), { recursive: true });
  writeFileSync(join(seed, "README.md"), "# shared\n");
  writeFileSync(
    join(seed, ".gitignore"),
    ".caesar/tasks/\n.caesar/wt/\n.caesar/state/\n.caesar/chat/\n.caesar/config.local.toml\n",
  );
  writeFileSync(
    join(seed, ".caesar", "config.toml"),
    config.includes("[sandbox]") ? config : UNSANDBOXED + config,
  );
  git(seed, "add", ".");
  execFileSync("git", [...GIT_ENV, "commit", "--quiet", "-m", "initial"], { cwd: seed });
  git(seed, "remote", "add", "origin", remote);
  git(seed, "push", "--quiet", "origin", "main");
  return remote;
}

export function cloneOf(remote: string, dir: string): string {
  // --no-local: objects travel as over a network (a local clone would copy every object, reachable or not).
  execFileSync("git", ["clone", "--quiet", "--no-local", remote, dir]);
  execFileSync("git", ["config", "user.name", "test"], { cwd: dir });
  execFileSync("git", ["config", "user.email", "test@example.com"], { cwd: dir });
  return dir;
}

/** The fixture agents' declarations, recording completed runs in `runs`. */
export function fixtureAgents(runs: string): string {
  const agent = (id: string, script: string, env: Record<string, string>) =>
    [
      "[[agent]]",
      `id = "${id}"`,
      `bin = "${join(FIXTURE_BIN, script)}"`,
      'args = ["{{prompt}}"]',
      `env = { ${Object.entries(env)
        .map(([k, v]) => `${k} = "${v}"`)
        .join(", ")} }`,
      "",
    ].join("\n");
  return [
    agent("nap", "napper.sh", { NAP_S: "1", RUNS: runs }),
    agent("long", "napper.sh", { NAP_S: "60", RUNS: runs }),
    agent("asker", "asker.sh", { RUNS: runs }),
  ].join("\n");
}

/** Completed runs recorded by the fixture agents: task id → the working directories it completed in. */
export function completedRuns(runs: string): Map<string, string[]> {
  const byTask = new Map<string, string[]>();
  if (!existsSync(runs)) return byTask;
  for (const line of readFileSync(runs, "utf8").split("\n").filter(Boolean)) {
    const [id, where] = line.split(" ");
    byTask.set(id!, [...(byTask.get(id!) ?? []), where ?? ""]);
  }
  return byTask;
}

export interface StateFile {
  id: string;
  parent_id: string | null;
  phase: string;
  outcome: string | null;
  report_status: string | null;
  error: { code: string; message: string } | null;
  finished_at: string | null;
  result_commit: string | null;
  remote: {
    worker: { id: string; host: string } | null;
    attempt: number;
    agent_pid: number | null;
    lost: { worker: string; attempt: number }[];
  } | null;
}

export function readStates(root: string): StateFile[] {
  const tasks = join(root, ".caesar", "tasks");
  if (!existsSync(tasks)) return [];
  return readdirSync(tasks)
    .filter((name) => name.startsWith("t_"))
    .flatMap((name) => {
      try {
        return [JSON.parse(readFileSync(join(tasks, name, "state.json"), "utf8")) as StateFile];
      } catch {
        return [];
      }
    });
}

export function readState(root: string, id: string): StateFile {
  return JSON.parse(readFileSync(join(root, ".caesar", "tasks", id, "state.json"), "utf8")) as StateFile;
}

/** Wait until `check` holds (polling), failing with `describe()` when it does not in time. */
export async function eventually(
  check: () => boolean,
  timeoutMs: number,
  describe: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export { tempDir };

/**
 * The nats-server for a suite that needs a real one, or undefined: then the file gets one stand-in test
 * (system-deps.ts) — skipped, saying how to run it, where nats-server is missing or `npm test` leaves the
 * cluster suites out; failing under CI=true where it is missing (.ci/run installs it). Call at the top of
 * the file, and skip its describes when it is undefined.
 */
export function requireNatsServer(): string | undefined {
  const path = locate(NATS_SERVER);
  if (path === undefined) describe("a real nats-server", () => standInForMissing(NATS_SERVER));
  return path;
}

/** [cluster] access naming only the servers: no credentials, no TLS. */
export function accessTo(...servers: string[]): ClusterAccess {
  return {
    servers,
    credentials: null,
    nkey: null,
    token_file: null,
    user: null,
    password_file: null,
    tls_ca: null,
    tls_cert: null,
    tls_key: null,
  };
}

/** A worker machine in `lab`: its own clone of `remote` (`clone-<name>`) and home (`home-<name>`). */
export function workerIn(lab: string, remote: string, name: string, args: string[]): WorkerProcess {
  const home = join(lab, `home-${name}`);
  mkdirSync(home, { recursive: true });
  return new WorkerProcess(name, cloneOf(remote, join(lab, `clone-${name}`)), home, args);
}
