import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CAESAR_BIN } from "../helpers/cli.js";
import {
  cloneOf,
  eventually,
  fixtureAgents,
  freePort,
  makeSharedRemote,
  NatsServer,
  requireNatsServer,
  tempDir,
  workerIn,
} from "../helpers/cluster.js";

const NATS_SERVER = requireNatsServer();
const MINUTE = 60_000;

function exitOf(child: ChildProcess): Promise<number> {
  const started = Date.now();
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(0);
    else child.once("exit", () => resolve(Date.now() - started));
  });
}

// The documented systemd unit stops a worker with SIGTERM: it must stop within seconds when it runs
// nothing, whether or not its NATS server can be reached.
describe.skipIf(!NATS_SERVER)("a worker told to stop while it cannot reach NATS", () => {
  const children: ChildProcess[] = [];
  const servers: NatsServer[] = [];
  afterEach(async () => {
    for (const child of children.splice(0))
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    for (const server of servers.splice(0)) await server.stop();
  });

  it(
    "exits within seconds of SIGTERM after its server went away",
    async () => {
      const lab = tempDir("caesar-worker-stop-");
      const server = new NatsServer(NATS_SERVER!, await freePort(), lab);
      servers.push(server);
      await server.start();
      const remote = makeSharedRemote(lab, fixtureAgents(join(lab, "runs.log")));
      const worker = workerIn(lab, remote, "w1", ["--on", server.url, "--agents", "nap"]);
      await worker.start();
      children.push(worker.child!);
      await server.stop();
      // Let it notice: its pulls fail, its client starts reconnecting.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const exited = exitOf(worker.child!);
      worker.child!.kill("SIGTERM");
      const took = await Promise.race([exited, new Promise<number>((r) => setTimeout(() => r(-1), 30_000))]);
      expect(took, readFileSync(worker.logPath, "utf8")).toBeGreaterThanOrEqual(0);
      expect(took, readFileSync(worker.logPath, "utf8")).toBeLessThan(10_000);
      expect(worker.child!.exitCode).toBe(0);
    },
    3 * MINUTE,
  );

  it(
    "exits within seconds of SIGTERM while it has never reached its server",
    async () => {
      const lab = tempDir("caesar-worker-stop-");
      const remote = makeSharedRemote(lab, fixtureAgents(join(lab, "runs.log")));
      const clone = cloneOf(remote, join(lab, "clone"));
      const home = join(lab, "home");
      mkdirSync(home, { recursive: true });
      const logPath = join(home, "worker.log");
      // A port nothing listens on.
      const url = `nats://127.0.0.1:${await freePort()}`;
      const child = spawn(process.execPath, [CAESAR_BIN, "worker", "--on", url, "--agents", "nap"], {
        cwd: clone,
        env: { ...process.env, HOME: home, XDG_CONFIG_HOME: join(home, ".config"), NO_COLOR: "1" },
        stdio: ["ignore", "ignore", openSync(logPath, "a")],
      });
      children.push(child);
      const log = () => (existsSync(logPath) ? readFileSync(logPath, "utf8") : "");
      // Retrying: two failed connections, so it is in its backoff between them.
      await eventually(
        () => log().split("retrying").length > 2,
        MINUTE,
        () => `the worker to retry its connection: ${log()}`,
      );
      const exited = exitOf(child);
      child.kill("SIGTERM");
      const took = await Promise.race([exited, new Promise<number>((r) => setTimeout(() => r(-1), 30_000))]);
      expect(took, log()).toBeGreaterThanOrEqual(0);
      expect(took, log()).toBeLessThan(5_000);
    },
    3 * MINUTE,
  );
});
