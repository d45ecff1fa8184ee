import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { headers } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readClaim } from "../../src/cluster/claims.js";
import { type Cluster, connectCluster } from "../../src/cluster/connection.js";
import { CLAIMS_BUCKET } from "../../src/cluster/names.js";
import type { TaskMessage } from "../../src/cluster/wire.js";
import { parseJsonOutput } from "../helpers/cli.js";
import {
  accessTo,
  eventually,
  fixtureAgents,
  readState,
  requireNatsServer,
  type WorkerProcess,
} from "../helpers/cluster.js";
import { ClusterLab } from "../helpers/cluster-lab.js";
import { git } from "../helpers/repo.js";

const NATS_SERVER = requireNatsServer();
const MINUTE = 60_000;

// Anyone who can publish on a queue's subject can put a task there: the commands it carries run on a
// worker only when the worker's own configuration has them.
describe.skipIf(!NATS_SERVER)("commands a queue message carries", () => {
  let lab: ClusterLab;
  let worker: WorkerProcess;
  let cluster: Cluster;
  /** The queue subject the nap tasks travel on (learnt from the first test's real submission). */
  let napSubject = "";

  const caesar = (args: string[]) => lab.caesar(args);

  beforeAll(async () => {
    lab = await ClusterLab.start(NATS_SERVER!, {
      name: "trust",
      config: (dir) =>
        [
          fixtureAgents(join(dir, "runs.log")),
          // The one check this repository's workers run: a role lists it.
          "[[role]]",
          'name = "checked"',
          'checks = ["test -f README.md"]',
          "",
        ].join("\n"),
    });
    worker = await lab.worker("w1", ["--agents", "nap"]);
    cluster = await connectCluster(accessTo(lab.url), "trust test");
  }, 2 * MINUTE);

  afterAll(async () => {
    await cluster?.close();
    await lab?.stop();
  }, 2 * MINUTE);

  it(
    "runs a check the worker's configuration lists, and refuses a raw message carrying setup and checks it does not",
    async () => {
      // What a submitter publishes, seen on the wire.
      const seen: { subject: string; data: Uint8Array }[] = [];
      const sub = cluster.nc.subscribe("caesar.tasks.>", {
        callback: (_error, msg) => {
          seen.push({ subject: msg.subject, data: msg.data });
        },
      });
      const sent = await caesar([
        "run",
        "--on",
        lab.url,
        "--agent",
        "nap",
        "--check",
        "test -f README.md",
        "--detach",
        "--json",
        "a nap with a trusted check",
      ]);
      expect(sent.code, sent.stderr).toBe(0);
      const id = parseJsonOutput<{ task_id: string }>(sent).task_id;
      await eventually(
        () => readState(lab.submitter, id).phase === "finished",
        2 * MINUTE,
        () =>
          `${id} to finish: ${JSON.stringify(readState(lab.submitter, id))}\n${readFileSync(worker.logPath, "utf8")}`,
      );
      expect(readState(lab.submitter, id)).toMatchObject({ outcome: "succeeded", error: null });
      sub.unsubscribe();
      const original = seen.find((m) => JSON.parse(new TextDecoder().decode(m.data)).task_id === id);
      expect(original).toBeDefined();
      napSubject = original!.subject;

      // The same message, as anyone on the subject could forge it: setup and a check of its own.
      const marker = join(lab.dir, "pwned");
      const forged = JSON.parse(new TextDecoder().decode(original!.data)) as TaskMessage;
      const forgedId = "t_00000000deadbeef";
      forged.task_id = forgedId;
      forged.plan.worktree.setup = [`touch ${marker}-setup`];
      forged.plan.checks = [
        { command: "test -f README.md", from: "request" },
        { command: `touch ${marker}-check`, from: "request" },
      ];
      // Its starting point is on the remote, as a real submitter's would be: only the worker's check stops it.
      forged.start.ref = `refs/caesar/start/${forgedId}`;
      git(lab.submitter, "push", "--quiet", "origin", `${forged.start.commit}:${forged.start.ref}`);
      const h = headers();
      h.set("Nats-Msg-Id", forgedId);
      await cluster.js.publish(original!.subject, JSON.stringify(forged), { headers: h });
      const claims = await cluster.bucket(CLAIMS_BUCKET);
      let final: NonNullable<Awaited<ReturnType<typeof readClaim>>>["claim"]["final"] = null;
      const deadline = Date.now() + MINUTE;
      while (!final && Date.now() < deadline) {
        final = (await readClaim(claims, forgedId))?.claim.final ?? null;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(final, readFileSync(worker.logPath, "utf8")).not.toBeNull();
      expect(final!.outcome).toBe("failed");
      expect(final!.error?.code).toBe("untrusted_command");
      expect(final!.error?.message).toContain(`[worktree] setup \`touch ${marker}-setup\``);
      expect(final!.error?.message).toContain(`a check (from request) \`touch ${marker}-check\``);
      expect(final!.error?.message).not.toContain("`test -f README.md`");
      // Nothing ran.
      expect(existsSync(`${marker}-setup`)).toBe(false);
      expect(existsSync(`${marker}-check`)).toBe(false);

      // Arguments for the agent's command line (a CLI's --mcp-config runs a program) are refused the same way.
      const withArgs = JSON.parse(new TextDecoder().decode(original!.data)) as TaskMessage;
      const argsId = "t_00000000feedface";
      withArgs.task_id = argsId;
      withArgs.plan.extra_args = ["--mcp-config", '{"mcpServers":{"x":{"command":"sh"}}}'];
      withArgs.start.ref = `refs/caesar/start/${argsId}`;
      git(lab.submitter, "push", "--quiet", "origin", `${withArgs.start.commit}:${withArgs.start.ref}`);
      const h2 = headers();
      h2.set("Nats-Msg-Id", argsId);
      await cluster.js.publish(original!.subject, JSON.stringify(withArgs), { headers: h2 });
      let argsFinal: typeof final = null;
      const argsDeadline = Date.now() + MINUTE;
      while (!argsFinal && Date.now() < argsDeadline) {
        argsFinal = (await readClaim(claims, argsId))?.claim.final ?? null;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(argsFinal, readFileSync(worker.logPath, "utf8")).not.toBeNull();
      expect(argsFinal!.error?.code).toBe("untrusted_command");
      expect(argsFinal!.error?.message).toContain("--mcp-config");
    },
    5 * MINUTE,
  );

  it(
    "lists the messages its workers dropped or refused in cluster status: what, when, who, why",
    async () => {
      expect(napSubject).toMatch(/^caesar\.tasks\./);
      // Not JSON (with a terminal escape in it), and JSON that is no task.
      await cluster.js.publish(napSubject, "\u001b[31mnot json at all");
      await cluster.js.publish(
        napSubject,
        JSON.stringify({ protocol: "caesar.cluster.task/v9", task_id: "t_x" }),
      );
      type Status = {
        dropped: {
          seq: number;
          action: string;
          task_id: string | null;
          reason: string;
          preview: string;
          worker: string;
        }[];
      };
      let status: Status = { dropped: [] };
      const deadline = Date.now() + MINUTE;
      while (status.dropped.filter((d) => d.action === "dropped").length < 2 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        status = parseJsonOutput<Status>(await caesar(["cluster", "status", "--on", lab.url, "--json"]));
      }
      const dropped = status.dropped.filter((d) => d.action === "dropped");
      expect(dropped.map((d) => d.reason).sort(), readFileSync(worker.logPath, "utf8")).toEqual([
        "not JSON",
        expect.stringMatching(/^not a caesar\.cluster\.task\/v1 task message \(protocol: /),
      ]);
      expect(dropped.every((d) => d.worker === "w1" && !d.preview.includes("\u001b"))).toBe(true);
      // The forged messages of the first test: refused, each with its task and its reason.
      const refused = status.dropped.filter((d) => d.action === "refused");
      expect(refused.map((d) => d.task_id).sort()).toEqual(["t_00000000deadbeef", "t_00000000feedface"]);
      expect(refused.every((d) => d.reason.startsWith("untrusted_command: "))).toBe(true);
      const text = await caesar(["cluster", "status", "--on", lab.url]);
      expect(text.stdout).toContain("Messages dropped or refused by workers");
      expect(text.stdout).toMatch(
        /w1 {2}refused t_00000000deadbeef {2}caesar\.tasks\.\S+: untrusted_command/,
      );
      expect(text.stdout).not.toContain("\u001b");
    },
    3 * MINUTE,
  );
});
