import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CAESAR_BIN, parseJsonOutput } from "../helpers/cli.js";
import { readStates, requireNatsServer } from "../helpers/cluster.js";
import { ClusterLab } from "../helpers/cluster-lab.js";
import { locate } from "../helpers/system-deps.js";
import { BUBBLEWRAP } from "../sandbox/probe-project.js";

const NATS_SERVER = requireNatsServer();
const SANDBOX = locate(BUBBLEWRAP);
const MINUTE = 60_000;
const FIXTURES = join(import.meta.dirname, "../fixtures/bin");

// A worker whose [sandbox] is required runs its agents in bubblewrap, without the network: a nested
// `caesar run` from inside can neither write the clone's records nor reach the NATS server. It goes through
// the task's broker, which the worker opens as the service does on a machine, and the child goes to the
// cluster as a remote task's child does.
describe.skipIf(!NATS_SERVER || !SANDBOX)("a cluster worker's sandboxed agents", () => {
  it(
    "delegate through their task's broker: the child runs in the cluster, one level deeper, sandboxed too",
    async () => {
      const lab = await ClusterLab.start(NATS_SERVER!, {
        name: "sandboxed",
        config: () =>
          [
            "[sandbox]",
            'mode = "required"',
            "",
            '[[agent]]\nid = "delegator"',
            `bin = "${join(FIXTURES, "delegator.mjs")}"`,
            `args = ["{{prompt}}"]\nenv = { CAESAR_BIN = "${CAESAR_BIN}" }\n`,
            '[[agent]]\nid = "nap"',
            `bin = "${join(FIXTURES, "napper.sh")}"`,
            'args = ["{{prompt}}"]\nenv = { NAP_S = "0" }\n',
            "[risk_profiles.default]",
            'delegation_policy = { mode = "allow" }',
          ].join("\n"),
      });
      try {
        const worker = await lab.worker("w1", ["--agents", "delegator,nap", "--max-parallel", "4"]);
        const objective = JSON.stringify({ name: "parent", calls: [{ agent: "nap", objective: "a child" }] });
        const sent = await lab.caesar(["run", "--on", lab.url, "--agent", "delegator", "--json", objective]);
        const parent = parseJsonOutput<{
          task_id: string;
          state: { outcome: string; report: { details: string } };
        }>(sent);
        expect(parent.state.outcome, `${sent.stderr}\n${lab.logs()}`).toBe("succeeded");
        const [call] = JSON.parse(parent.state.report.details) as {
          exit: number;
          task_id: string | null;
          report_status: string | null;
          error: { code: string; summary: string } | null;
        }[];
        expect(call, JSON.stringify(call)).toMatchObject({ exit: 0, report_status: "success" });

        // Both ran in the worker's clone, in bubblewrap; the child one level below its parent (its record as
        // the worker sent it, and `<id>.run`, the worker's run of it).
        const states = readStates(worker.clone);
        const child = states.find((state) => state.id === call!.task_id);
        expect(child).toMatchObject({ parent_id: parent.task_id, phase: "finished" });
        const childPlan = JSON.parse(
          readFileSync(join(worker.clone, ".caesar", "tasks", call!.task_id!, "plan.json"), "utf8"),
        ) as { depth: number };
        expect(childPlan.depth).toBe(2);
        for (const id of [parent.task_id, `${call!.task_id!}.run`]) {
          const plan = JSON.parse(
            readFileSync(join(worker.clone, ".caesar", "tasks", id, "plan.json"), "utf8"),
          ) as { sandbox: { backend: string | null } };
          expect(plan.sandbox.backend, id).toBe("bwrap");
        }
      } finally {
        await lab.stop();
      }
    },
    8 * MINUTE,
  );
});
