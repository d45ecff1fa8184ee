import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lockHolder } from "../../src/support/lock.js";
import { isProcessAlive } from "../../src/support/process.js";
import { type CliResult, parseJsonOutput, runCaesar } from "../helpers/cli.js";
import {
  cloneOf,
  eventually,
  fixtureAgents,
  freePort,
  makeSharedRemote,
  NatsServer,
  readState,
  requireNatsServer,
  tempDir,
  type WorkerProcess,
  workerIn,
} from "../helpers/cluster.js";

const NATS_SERVER = requireNatsServer();
const MINUTE = 60_000;

/** A machine's global configuration naming the token file, as docs/cluster.md's quick start writes it. */
function giveToken(home: string, token: string): void {
  const dir = join(home, ".config", "caesar");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "nats.token"), `${token}\n`, { mode: 0o600 });
  writeFileSync(join(dir, "config.toml"), '[cluster]\ntoken_file = "~/.config/caesar/nats.token"\n');
}

// docs/cluster.md's quick start: a server that requires a token, workers and submitters reading it from a
// file their global configuration names — never from a command line.
describe.skipIf(!NATS_SERVER)("the quick start, with authentication", () => {
  let lab: string;
  let server: NatsServer;
  let remote: string;
  let worker: WorkerProcess;
  let submitter: string;
  const token = randomBytes(24).toString("hex");

  const caesarAs = (home: string, args: string[]): Promise<CliResult> =>
    runCaesar(args, {
      cwd: submitter,
      env: { HOME: home, XDG_CONFIG_HOME: join(home, ".config") },
      timeoutMs: 2 * MINUTE,
    });

  beforeAll(async () => {
    lab = tempDir("caesar-cluster-quickstart-");
    const conf = join(lab, "caesar-nats.conf");
    writeFileSync(conf, `authorization { token: "${token}" }\n`, { mode: 0o600 });
    server = new NatsServer(NATS_SERVER!, await freePort(), lab, ["-c", conf]);
    await server.start();
    remote = makeSharedRemote(lab, fixtureAgents(join(lab, "runs.log")));
    submitter = cloneOf(remote, join(lab, "submitter"));
    worker = workerIn(lab, remote, "w1", ["--on", server.url, "--agents", "nap"]);
    giveToken(worker.home, token);
    await worker.start();
  }, 2 * MINUTE);

  afterAll(async () => {
    await worker?.stop();
    const relay = submitter && lockHolder(join(submitter, ".caesar", "state", "relay.lock"));
    if (relay && isProcessAlive(relay.pid)) process.kill(relay.pid, "SIGTERM");
    await server?.stop();
  }, 2 * MINUTE);

  it(
    "runs a task for a submitter with the token file, and refuses one without it, saying what to do",
    async () => {
      const withToken = join(lab, "home-dev");
      giveToken(withToken, token);
      const sent = await caesarAs(withToken, [
        "run",
        "--on",
        server.url,
        "--agent",
        "nap",
        "--detach",
        "--json",
        "nap",
      ]);
      expect(sent.code, sent.stderr).toBe(0);
      const id = parseJsonOutput<{ task_id: string }>(sent).task_id;
      await eventually(
        () => readState(submitter, id).phase === "finished",
        2 * MINUTE,
        () => `${id} to finish\n${readFileSync(worker.logPath, "utf8")}`,
      );
      expect(readState(submitter, id)).toMatchObject({ outcome: "succeeded", error: null });

      const before = readdirSync(join(submitter, ".caesar", "tasks")).length;
      const stranger = join(lab, "home-stranger");
      mkdirSync(stranger, { recursive: true });
      const refused = await caesarAs(stranger, [
        "run",
        "--on",
        server.url,
        "--agent",
        "nap",
        "--json",
        "nap",
      ]);
      expect(refused.code).not.toBe(0);
      const error = parseJsonOutput<{ error: { code: string; summary: string; detail: string } }>(
        refused,
      ).error;
      expect(error.code).toBe("nats_auth_refused");
      expect(error.summary).toContain(`The NATS server at ${server.url} refused caesar's credentials.`);
      expect(error.detail).toMatch(/caesar presented no credentials/);
      expect(error.detail).toMatch(/token or user and password_file in \[cluster\]/);
      // Refused before anything exists.
      expect(readdirSync(join(submitter, ".caesar", "tasks")).length).toBe(before);
      // The same in text, for a person.
      const text = await caesarAs(stranger, ["cluster", "status", "--on", server.url]);
      expect(text.code).not.toBe(0);
      expect(text.stderr).toContain("refused caesar's credentials");
      // And a wrong token is no better.
      const wrong = join(lab, "home-wrong");
      giveToken(wrong, "not-the-token");
      const wrongly = await caesarAs(wrong, ["cluster", "status", "--on", server.url, "--json"]);
      expect(parseJsonOutput<{ error: { code: string; detail: string } }>(wrongly).error).toMatchObject({
        code: "nats_auth_refused",
        detail: expect.stringContaining("the token in"),
      });
    },
    5 * MINUTE,
  );
});
