import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ClusterAccess, connectCluster } from "../../src/cluster/connection.js";
import { ensureInfrastructure } from "../../src/cluster/setup.js";
import { lockHolder } from "../../src/support/lock.js";
import { isProcessAlive } from "../../src/support/process.js";
import { type CliResult, parseJsonOutput, runCaesar } from "../helpers/cli.js";
import {
  accessTo,
  cloneOf,
  completedRuns,
  eventually,
  fixtureAgents,
  freePort,
  makeSharedRemote,
  NatsServer,
  readState,
  readStates,
  requireNatsServer,
  tempDir,
  type WorkerProcess,
  workerIn,
} from "../helpers/cluster.js";
import { makeOperatorMode, type OperatorMode } from "../helpers/nats-operator.js";

const NATS_SERVER = requireNatsServer();

const MINUTE = 60_000;

const NO_ACCESS: ClusterAccess = accessTo();

/** Stop the relay a submitter started (it exits on its own once idle; do not leave it to the next suite). */
function stopRelay(root: string): void {
  const relay = lockHolder(join(root, ".caesar", "state", "relay.lock"));
  if (relay !== undefined && isProcessAlive(relay)) process.kill(relay.pid, "SIGTERM");
}

describe.skipIf(!NATS_SERVER)("a .creds file (JWT + nkey seed), against an operator-mode nats-server", () => {
  let lab: string;
  let server: NatsServer;
  let operator: OperatorMode;
  const workers: WorkerProcess[] = [];
  const submitters: string[] = [];

  beforeAll(async () => {
    lab = tempDir("caesar-nats-creds-");
    operator = await makeOperatorMode(lab);
    server = new NatsServer(NATS_SERVER!, await freePort(), lab, ["-c", operator.config]);
    await server.start();
  }, MINUTE);

  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    for (const root of submitters) stopRelay(root);
    await server?.stop();
  }, 2 * MINUTE);

  it("connects with it and uses JetStream; a stranger's, an expired, a malformed or a missing one is refused, and an account without JetStream named, saying which", async () => {
    const cluster = await connectCluster(
      { ...NO_ACCESS, servers: [server.url], credentials: operator.creds },
      "test",
    );
    try {
      await ensureInfrastructure(cluster);
      const kv = await cluster.bucket("caesar-control");
      await kv.put("probe", "with creds");
      expect(new TextDecoder().decode((await kv.get("probe"))?.value)).toBe("with creds");
    } finally {
      await cluster.close();
    }

    // The same file with Windows line ends (a copy made on another machine) is the same credentials.
    const crlf = join(lab, "crlf.creds");
    writeFileSync(crlf, readFileSync(operator.creds, "utf8").replace(/\n/g, "\r\n"), { mode: 0o600 });
    await (await connectCluster({ ...NO_ACCESS, servers: [server.url], credentials: crlf }, "test")).close();

    const refused = (credentials: string) =>
      connectCluster({ ...NO_ACCESS, servers: [server.url], credentials }, "test");
    await expect(refused(operator.foreignCreds)).rejects.toMatchObject({ code: "nats_auth_refused" });
    // The server says only "Authorization Violation": caesar adds what the JWT says about itself.
    await expect(refused(operator.expiredCreds)).rejects.toMatchObject({
      code: "nats_auth_refused",
      detail: expect.stringMatching(/expired at .*make new credentials/),
    });
    const malformed = join(lab, "malformed.creds");
    writeFileSync(malformed, "not a credentials file\n", { mode: 0o600 });
    await expect(refused(malformed)).rejects.toMatchObject({
      code: "nats_credentials_invalid",
      message: expect.stringContaining(malformed),
      detail: expect.stringContaining("nsc generate creds"),
    });
    await expect(refused(join(lab, "absent.creds"))).rejects.toMatchObject({
      code: "nats_credentials_unreadable",
      message: expect.stringContaining("absent.creds"),
    });
    // Let in, but into an account without JetStream: nothing caesar does could work there.
    await expect(refused(operator.noJetStreamCreds)).rejects.toMatchObject({
      code: "jetstream_unavailable",
      detail: expect.stringContaining("nsc edit account --js-disk-storage"),
    });
    // No credentials at all: an operator-mode server lets no one in.
    await expect(connectCluster({ ...NO_ACCESS, servers: [server.url] }, "test")).rejects.toMatchObject({
      code: "nats_auth_refused",
    });
  });

  it(
    "a worker given --creds and a submitter with [cluster] credentials run a task through the cluster; wrong ones stop at once, saying why",
    async () => {
      const runs = join(lab, "runs.log");
      const remote = makeSharedRemote(join(lab, "project"), fixtureAgents(runs));
      const submitter = cloneOf(remote, join(lab, "submitter"));
      submitters.push(submitter);
      const submitterHome = join(lab, "submitter-home");
      mkdirSync(submitterHome, { recursive: true });
      const configure = (credentials: string) =>
        writeFileSync(
          join(submitter, ".caesar", "config.local.toml"),
          `[cluster]\nnats = "${server.url}"\ncredentials = "${credentials}"\n`,
        );
      const caesar = (args: string[], cwd = submitter, home = submitterHome): Promise<CliResult> =>
        runCaesar(args, {
          cwd,
          env: { HOME: home, XDG_CONFIG_HOME: join(home, ".config") },
          timeoutMs: 2 * MINUTE,
        });

      const worker = workerIn(lab, remote, "w1", [
        "--on",
        server.url,
        "--creds",
        operator.creds,
        "--agents",
        "nap",
      ]);
      workers.push(worker);
      await worker.start();

      // [cluster] nats makes the cluster the default: no --on, as a user with it configured types it.
      configure(operator.creds);
      const submitted = await caesar(["run", "--agent", "nap", "--detach", "--json", "nap with creds"]);
      expect(submitted.code, submitted.stderr + submitted.stdout).toBe(0);
      const id = parseJsonOutput<{ task_id: string }>(submitted).task_id;
      await eventually(
        () => readState(submitter, id).phase === "finished",
        4 * MINUTE,
        () =>
          `${id} to finish: ${JSON.stringify(readState(submitter, id))}\n${readFileSync(worker.logPath, "utf8").slice(-3000)}`,
      );
      const state = readState(submitter, id);
      expect(`${state.outcome}/${state.report_status}`).toBe("succeeded/success");
      expect(state.remote?.worker?.id).toBe("w1");
      expect(completedRuns(runs).get(id)).toEqual([expect.stringContaining("clone-w1")]);
      // The change came back through git, fetched by the submitter's relay (connected with the creds too).
      const diff = parseJsonOutput<{ changes: { path: string }[] }>(await caesar(["diff", id, "--json"]));
      expect(diff.changes.map((c) => c.path)).toEqual([`nap-${id}.txt`]);
      const status = await caesar(["cluster", "status", "--json"]);
      expect(status.code, status.stderr).toBe(0);
      expect(parseJsonOutput<{ workers: { id: string }[] }>(status).workers.map((w) => w.id)).toEqual(["w1"]);

      // An expired user JWT: refused before anything exists here, saying it expired.
      configure(operator.expiredCreds);
      const before = readStates(submitter).length;
      const expired = await caesar(["run", "--agent", "nap", "--json", "nap with expired creds"]);
      expect(expired.code).not.toBe(0);
      expect(expired.stderr + expired.stdout).toContain("nats_auth_refused");
      expect(expired.stderr + expired.stdout).toMatch(/expired at/);
      expect(readStates(submitter)).toHaveLength(before);

      // Workers whose credentials cannot work stop at once with the reason, rather than retrying forever.
      const cases: [string, string][] = [
        [operator.foreignCreds, "nats_auth_refused"],
        [join(lab, "malformed-worker.creds"), "nats_credentials_invalid"],
        [join(lab, "no-such.creds"), "nats_credentials_unreadable"],
      ];
      writeFileSync(cases[1]![0], "-----BEGIN NATS USER JWT-----\nnot a jwt\n", { mode: 0o600 });
      const elsewhere = cloneOf(remote, join(lab, "clone-refused"));
      for (const [creds, code] of cases) {
        const refused = await caesar(
          ["worker", "--on", server.url, "--creds", creds, "--agents", "nap", "--json"],
          elsewhere,
          worker.home,
        );
        expect(refused.code, creds).not.toBe(0);
        expect(refused.stderr + refused.stdout, creds).toContain(code);
        expect(refused.stderr + refused.stdout, creds).toContain(creds);
      }
    },
    8 * MINUTE,
  );
});
