import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
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
  readState,
  requireNatsServer,
  tempDir,
} from "../helpers/cluster.js";
import { git } from "../helpers/repo.js";

const NATS_SERVER = requireNatsServer();
const MINUTE = 60_000;

describe.skipIf(!NATS_SERVER)("a task's starting point on the git remote", () => {
  let server: NatsServer | undefined;
  let submitter = "";
  afterAll(async () => {
    const relay = submitter ? lockHolder(join(submitter, ".caesar", "state", "relay.lock")) : undefined;
    if (relay !== undefined && isProcessAlive(relay.pid)) process.kill(relay.pid, "SIGTERM");
    await server?.stop();
  });

  it(
    "leaves the remote when the task is cancelled in the queue",
    async () => {
      const lab = tempDir("caesar-start-ref-");
      server = new NatsServer(NATS_SERVER!, await freePort(), lab);
      await server.start();
      const remote = makeSharedRemote(lab, fixtureAgents(join(lab, "runs.log")));
      submitter = cloneOf(remote, join(lab, "submitter"));
      const home = join(lab, "home");
      mkdirSync(home, { recursive: true });
      const caesar = (args: string[]) =>
        runCaesar(args, {
          cwd: submitter,
          env: { HOME: home, XDG_CONFIG_HOME: join(home, ".config") },
          timeoutMs: 2 * MINUTE,
        });
      // No worker serves it: it waits in the queue.
      const sent = await caesar([
        "run",
        "--on",
        server.url,
        "--agent",
        "nap",
        "--detach",
        "--json",
        "a nap nobody takes",
      ]);
      expect(sent.code, sent.stderr).toBe(0);
      const id = parseJsonOutput<{ task_id: string }>(sent).task_id;
      const startRef = () => git(remote, "for-each-ref", `refs/caesar/start/${id}`);
      await eventually(
        () => readState(submitter, id).remote !== null && startRef() !== "",
        MINUTE,
        () => `${id} to be queued with its start ref: ${JSON.stringify(readState(submitter, id))}`,
      );
      const cancelled = await caesar(["cancel", id, "--json"]);
      expect(cancelled.code, cancelled.stderr + cancelled.stdout).toBe(0);
      await eventually(
        () => readState(submitter, id).phase === "finished",
        MINUTE,
        () => JSON.stringify(readState(submitter, id)),
      );
      expect(readState(submitter, id).error?.code).toBe("cancelled_in_queue");
      await eventually(
        () => startRef() === "",
        30_000,
        () => `refs/caesar/start/${id} to leave the remote`,
      );
    },
    4 * MINUTE,
  );
});
