import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CAESAR_BIN, parseJsonOutput } from "../helpers/cli.js";
import {
  completedRuns,
  eventually,
  fixtureAgents,
  readStates,
  requireNatsServer,
  type WorkerProcess,
} from "../helpers/cluster.js";
import { ClusterLab } from "../helpers/cluster-lab.js";

const NATS_SERVER = requireNatsServer();
const MINUTE = 60_000;

// One worker: a remote task's child, sent to the cluster by that worker, comes back to the same worker,
// whose record of running it names the worker's own process as its conductor.
describe.skipIf(!NATS_SERVER)("a cancel cascading to a child run by the same worker", () => {
  let lab: ClusterLab;
  let runs: string;
  let worker: WorkerProcess;
  const caesar = (args: string[]) => lab.caesar(args);

  beforeAll(async () => {
    lab = await ClusterLab.start(NATS_SERVER!, {
      name: "self-cancel",
      config: (dir) => {
        runs = join(dir, "runs.log");
        return [
          "[cluster]",
          'heartbeat_timeout = "6s"',
          "",
          fixtureAgents(runs),
          '[[agent]]\nid = "delegator"',
          `bin = "${join(import.meta.dirname, "../fixtures/bin/delegator.mjs")}"`,
          `args = ["{{prompt}}"]\nenv = { CAESAR_BIN = "${CAESAR_BIN}" }\n`,
          "[risk_profiles.default]",
          'delegation_policy = { mode = "allow" }',
        ].join("\n");
      },
    });
    worker = await lab.worker("w1", ["--agents", "long,delegator", "--max-parallel", "4"]);
  }, 5 * MINUTE);

  afterAll(() => lab?.stop(), 2 * MINUTE);

  it(
    "cancels the child through the cluster and never signals the worker itself",
    async () => {
      const objective = JSON.stringify({
        name: "parent",
        calls: [{ agent: "long", objective: "a long child" }],
      });
      const sent = await caesar([
        "run",
        "--on",
        lab.url,
        "--agent",
        "delegator",
        "--detach",
        "--json",
        objective,
      ]);
      expect(sent.code, sent.stderr).toBe(0);
      const id = parseJsonOutput<{ task_id: string }>(sent).task_id;
      const childRun = () => readStates(worker.clone).find((state) => state.id.endsWith(".run"));
      await eventually(
        () => childRun()?.phase === "running",
        2 * MINUTE,
        () => `the child to run on w1: ${readFileSync(worker.logPath, "utf8").slice(-2000)}`,
      );
      const child = childRun()!.id.replace(/\.run$/, "");
      const cancelled = await caesar(["cancel", id, "--json"]);
      expect(cancelled.code, cancelled.stderr).toBe(0);
      await eventually(
        () => readStates(worker.clone).find((state) => state.id === child)?.phase === "finished",
        90_000,
        () => `the child to end: ${readFileSync(worker.logPath, "utf8").slice(-2000)}`,
      );
      expect(readStates(worker.clone).find((state) => state.id === child)?.outcome).toBe("cancelled");
      expect(completedRuns(runs).get(child)).toBeUndefined();
      // The worker is still there, taking tasks.
      expect(readFileSync(worker.logPath, "utf8")).not.toContain("taking no new one");
      expect(worker.child?.exitCode).toBeNull();
    },
    6 * MINUTE,
  );
});
