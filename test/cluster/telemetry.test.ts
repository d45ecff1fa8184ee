import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lockHolder } from "../../src/support/lock.js";
import { isProcessAlive } from "../../src/support/process.js";
import { CAESAR_BIN, parseJsonOutput, runCaesar } from "../helpers/cli.js";
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
import { OtlpReceiver } from "../helpers/otlp-receiver.js";
import { FIXTURE_BIN } from "../helpers/repo.js";

const NATS_SERVER = requireNatsServer();
const MINUTE = 60_000;

describe.skipIf(!NATS_SERVER)("traces across machines", () => {
  let lab: string;
  let server: NatsServer;
  let submitter: string;
  let worker: WorkerProcess;
  const receiver = new OtlpReceiver();
  let endpoint: string;

  beforeAll(async () => {
    lab = tempDir("caesar-cluster-trace-");
    endpoint = await receiver.listen();
    server = new NatsServer(NATS_SERVER!, await freePort(), lab);
    await server.start();
    const config = [
      fixtureAgents(join(lab, "runs.log")),
      '[[agent]]\nid = "delegator"',
      `bin = "${join(FIXTURE_BIN, "delegator.mjs")}"`,
      `args = ["{{prompt}}"]\nenv = { CAESAR_BIN = "${CAESAR_BIN}" }\n`,
      "[risk_profiles.default]",
      'delegation_policy = { mode = "allow" }',
    ].join("\n");
    const remote = makeSharedRemote(lab, config);
    submitter = cloneOf(remote, join(lab, "submitter"));
    // The worker's own environment names no collector: the task's plan does.
    worker = workerIn(lab, remote, "w1", [
      "--nats",
      server.url,
      "--agents",
      "nap,delegator",
      "--max-parallel",
      "4",
    ]);
    await worker.start();
  }, 5 * MINUTE);

  afterAll(async () => {
    await worker?.stop();
    for (const root of [submitter, worker?.clone]) {
      if (!root) continue;
      const relay = lockHolder(join(root, ".caesar", "state", "relay.lock"));
      if (relay !== undefined && isProcessAlive(relay)) process.kill(relay.pid, "SIGTERM");
    }
    await server?.stop();
    await receiver.close();
  }, 2 * MINUTE);

  it(
    "a remote task and the child it delegates in the cluster are one trace, exported by the worker, the child under the parent's span",
    async () => {
      const objective = JSON.stringify({ name: "parent", calls: [{ agent: "nap", objective: "a child" }] });
      const result = await runCaesar(
        ["run", "--on", server.url, "--agent", "delegator", "--detach", "--json", objective],
        {
          cwd: submitter,
          env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" },
          timeoutMs: 2 * MINUTE,
        },
      );
      expect(result.code, result.stderr).toBe(0);
      const id = parseJsonOutput<{ task_id: string }>(result).task_id;
      await eventually(
        () => readState(submitter, id).phase === "finished",
        4 * MINUTE,
        () => `${id} to finish`,
      );
      const isTask = (span: { attributes: Record<string, unknown> }) =>
        span.attributes["gen_ai.operation.name"] === "invoke_agent";
      const spans = await receiver.waitFor((received) => received.filter(isTask).length >= 2, 60_000);
      const parent = spans.find((span) => span.attributes["gen_ai.agent.id"] === id)!;
      const child = spans.find((span) => isTask(span) && span !== parent)!;
      expect(parent.attributes).toMatchObject({
        "gen_ai.agent.name": "delegator",
        "caesar.task.remote": true,
      });
      expect(child.attributes).toMatchObject({
        "gen_ai.agent.name": "nap",
        "caesar.task.parent_id": id,
        "caesar.task.depth": 2,
      });
      expect(child).toMatchObject({ traceId: parent.traceId, parentSpanId: parent.spanId });
      expect(new Set(spans.map((span) => span.traceId))).toEqual(new Set([parent.traceId]));
    },
    6 * MINUTE,
  );
});
