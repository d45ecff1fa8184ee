import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseJsonOutput } from "../helpers/cli.js";
import {
  eventually,
  fixtureAgents,
  readState,
  requireNatsServer,
  type WorkerProcess,
} from "../helpers/cluster.js";
import { ClusterLab } from "../helpers/cluster-lab.js";

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
  let lab: ClusterLab;
  let worker: WorkerProcess;
  const token = randomBytes(24).toString("hex");

  beforeAll(async () => {
    lab = await ClusterLab.start(NATS_SERVER!, {
      name: "quickstart",
      config: (dir) => fixtureAgents(join(dir, "runs.log")),
      serverArgs: (dir) => {
        const conf = join(dir, "caesar-nats.conf");
        writeFileSync(conf, `authorization { token: "${token}" }\n`, { mode: 0o600 });
        return ["-c", conf];
      },
    });
    worker = await lab.worker("w1", ["--agents", "nap"], { start: false });
    giveToken(worker.home, token);
    await worker.start();
  }, 2 * MINUTE);

  afterAll(() => lab?.stop(), 2 * MINUTE);

  it(
    "runs a task for a submitter with the token file, and refuses one without it, saying what to do",
    async () => {
      const withToken = join(lab.dir, "home-dev");
      giveToken(withToken, token);
      const sent = await lab.caesar(
        ["run", "--on", lab.url, "--agent", "nap", "--detach", "--json", "nap"],
        withToken,
      );
      expect(sent.code, sent.stderr).toBe(0);
      const id = parseJsonOutput<{ task_id: string }>(sent).task_id;
      await eventually(
        () => readState(lab.submitter, id).phase === "finished",
        2 * MINUTE,
        () => `${id} to finish\n${readFileSync(worker.logPath, "utf8")}`,
      );
      expect(readState(lab.submitter, id)).toMatchObject({ outcome: "succeeded", error: null });

      const before = readdirSync(join(lab.submitter, ".caesar", "tasks")).length;
      const stranger = join(lab.dir, "home-stranger");
      mkdirSync(stranger, { recursive: true });
      const refused = await lab.caesar(["run", "--on", lab.url, "--agent", "nap", "--json", "nap"], stranger);
      expect(refused.code).not.toBe(0);
      const error = parseJsonOutput<{ error: { code: string; summary: string; detail: string } }>(
        refused,
      ).error;
      expect(error.code).toBe("nats_auth_refused");
      expect(error.summary).toContain(`The NATS server at ${lab.url} refused caesar's credentials.`);
      expect(error.detail).toMatch(/caesar presented no credentials/);
      expect(error.detail).toMatch(/token or user and password_file in \[cluster\]/);
      // Refused before anything exists.
      expect(readdirSync(join(lab.submitter, ".caesar", "tasks")).length).toBe(before);
      // The same in text, for a person.
      const text = await lab.caesar(["cluster", "status", "--on", lab.url], stranger);
      expect(text.code).not.toBe(0);
      expect(text.stderr).toContain("refused caesar's credentials");
      // And a wrong token is no better.
      const wrong = join(lab.dir, "home-wrong");
      giveToken(wrong, "not-the-token");
      const wrongly = await lab.caesar(["cluster", "status", "--on", lab.url, "--json"], wrong);
      expect(parseJsonOutput<{ error: { code: string; detail: string } }>(wrongly).error).toMatchObject({
        code: "nats_auth_refused",
        detail: expect.stringContaining("the token in"),
      });
    },
    5 * MINUTE,
  );
});
