import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { lockHolder } from "../../src/support/lock.js";
import { isProcessAlive } from "../../src/support/process.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import {
  cloneOf,
  eventually,
  fixtureAgents,
  freePort,
  makeSharedRemote,
  NatsServer,
  requireNatsServer,
  tempDir,
} from "../helpers/cluster.js";

const NATS_SERVER = requireNatsServer();
const MINUTE = 60_000;

/** CPU time (user + system, in clock ticks) a process has used so far. */
function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

// A relay follows a submitter's remote tasks. Here its task waits in a queue no worker serves, then its
// server goes away: the relay must still end when told to, or when its project is removed, and never spin.
describe.skipIf(!NATS_SERVER)("the relay of a project whose server or project is gone", () => {
  const pids: number[] = [];
  const servers: NatsServer[] = [];
  afterEach(async () => {
    for (const pid of pids.splice(0)) if (isProcessAlive(pid)) process.kill(pid, "SIGKILL");
    for (const server of servers.splice(0)) await server.stop();
  });

  async function queuedTaskWithDeadServer(): Promise<{ root: string; relay: number }> {
    const lab = tempDir("caesar-relay-exit-");
    const server = new NatsServer(NATS_SERVER!, await freePort(), lab);
    servers.push(server);
    await server.start();
    const remote = makeSharedRemote(lab, fixtureAgents(join(lab, "runs.log")));
    const root = cloneOf(remote, join(lab, "submitter"));
    const home = join(lab, "home");
    mkdirSync(home, { recursive: true });
    const sent = await runCaesar(
      ["run", "--on", server.url, "--agent", "nap", "--detach", "--json", "a nap nobody takes"],
      { cwd: root, env: { HOME: home, XDG_CONFIG_HOME: join(home, ".config") }, timeoutMs: 2 * MINUTE },
    );
    expect(sent.code, sent.stderr).toBe(0);
    parseJsonOutput<{ task_id: string }>(sent);
    const lock = join(root, ".caesar", "state", "relay.lock");
    await eventually(
      () => lockHolder(lock) !== undefined,
      MINUTE,
      () => "the relay to start",
    );
    const relay = lockHolder(lock)!.pid;
    pids.push(relay);
    await server.stop();
    return { root, relay };
  }

  it(
    "stops on SIGTERM while its server is gone, without spinning meanwhile",
    async () => {
      const { relay } = await queuedTaskWithDeadServer();
      const before = cpuTicks(relay);
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      // Waiting for a server costs (almost) nothing: well under a second of CPU in three.
      expect(cpuTicks(relay) - before).toBeLessThan(100);
      process.kill(relay, "SIGTERM");
      await eventually(
        () => !isProcessAlive(relay),
        45_000,
        () => `relay ${relay} to exit after SIGTERM`,
      );
    },
    4 * MINUTE,
  );

  it(
    "stops once its project is removed",
    async () => {
      const { root, relay } = await queuedTaskWithDeadServer();
      rmSync(root, { recursive: true, force: true });
      await eventually(
        () => !isProcessAlive(relay),
        45_000,
        () => `relay ${relay} to exit once ${root} is gone`,
      );
    },
    4 * MINUTE,
  );
});
