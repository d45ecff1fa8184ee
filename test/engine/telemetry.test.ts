import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CAESAR_BIN, parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { OtlpReceiver, type ReceivedSpan } from "../helpers/otlp-receiver.js";
import { FIXTURE_BIN, makeRepo, taskRecordDir, writeFiles } from "../helpers/repo.js";

const DELEGATOR = join(FIXTURE_BIN, "delegator.mjs");

function project(extra = ""): string {
  const root = makeRepo({ "README.md": "# traced\n" });
  const agents = ["planner", "worker", "helper"]
    .map((id) => `[[agent]]\nid = "${id}"\nbin = "${DELEGATOR}"\n`)
    .join("\n");
  writeFiles(root, {
    ".caesar/config.toml": `[risk_profiles.default]\ndelegation_policy = { mode = "allow" }\n${extra}\n${agents}`,
  });
  return root;
}

// caesar's records, not the task directory's mirrors: a mirror is written just after its record, so right
// after `caesar run` returns it may still be on its way.
function readState(root: string, id: string) {
  return JSON.parse(readFileSync(join(taskRecordDir(root, id), "state.json"), "utf8"));
}

function readPlan(root: string, id: string) {
  return JSON.parse(readFileSync(join(taskRecordDir(root, id), "plan.json"), "utf8"));
}

const receivers: OtlpReceiver[] = [];
const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await runCaesar(["service", "stop", "--now"], { cwd: root });
  for (const receiver of receivers.splice(0)) await receiver.close();
});

describe("OpenTelemetry traces of a delegation tree", () => {
  it("a parent that delegates to two children: one trace, the children under the parent's span, GenAI attributes, no span lost", async () => {
    const receiver = new OtlpReceiver();
    receivers.push(receiver);
    const endpoint = await receiver.listen();
    const root = project();
    roots.push(root);
    const planner = {
      name: "planner",
      usage: { input_tokens: 1200, output_tokens: 340, cost_usd: 0.05 },
      env: ["TRACEPARENT"],
      calls: [
        {
          agent: "worker",
          flags: ["--mode", "read-only"],
          objective: { name: "left", calls: [], env: ["TRACEPARENT"] },
        },
        { agent: "helper", flags: ["--mode", "read-only"], objective: { name: "right", calls: [] } },
      ],
    };
    const result = await runCaesar(["run", "--json", "--agent", "planner", JSON.stringify(planner)], {
      cwd: root,
      env: {
        CAESAR_BIN,
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_SERVICE_NAME: "caesar-under-test",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=test,team=a%2Cb",
      },
      timeoutMs: 120_000,
    });
    expect(result.code, result.stderr).toBe(0);
    const top = parseJsonOutput<{ task_id: string }>(result).task_id;
    const calls = JSON.parse(readState(root, top).report.details) as { task_id: string }[];
    const [left, right] = calls.map((call) => call.task_id);
    expect(left && right).toBeTruthy();
    const ids = [top, left!, right!];

    const isTask = (span: ReceivedSpan) => span.attributes["gen_ai.operation.name"] === "invoke_agent";
    const spans = await receiver.waitFor((received) => received.filter(isTask).length >= 3);
    const tasks = new Map(
      spans.filter(isTask).map((span) => [span.attributes["gen_ai.agent.id"] as string, span]),
    );
    expect([...tasks.keys()].sort()).toEqual([...ids].sort());
    // No span lost, none twice: each task's span once.
    expect(spans.filter(isTask)).toHaveLength(3);

    const parent = tasks.get(top)!;
    // One trace, the children's parent span the parent's span; the parent a root span.
    expect(new Set(spans.map((span) => span.traceId))).toEqual(new Set([parent.traceId]));
    expect(parent.parentSpanId).toBe("");
    for (const child of [left!, right!]) expect(tasks.get(child)!.parentSpanId).toBe(parent.spanId);
    // The span ids are the ones the plans recorded (the trace context travels in the plan).
    for (const id of ids) {
      const trace = readPlan(root, id).trace;
      expect(tasks.get(id)).toMatchObject({ traceId: trace.trace_id, spanId: trace.span_id });
    }
    // The children ran inside the parent's span.
    for (const child of [left!, right!]) {
      expect(tasks.get(child)!.startMs).toBeGreaterThanOrEqual(parent.startMs);
      expect(tasks.get(child)!.endMs).toBeLessThanOrEqual(parent.endMs);
    }

    // GenAI semantic conventions, and caesar's own account of the task.
    expect(parent.name).toBe("invoke_agent planner");
    expect(parent.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "planner",
      "gen_ai.agent.id": top,
      "gen_ai.usage.input_tokens": 1200,
      "gen_ai.usage.output_tokens": 340,
      "caesar.cost_usd": 0.05,
      // The person who ran it is depth 0: the task is 1, its children 2.
      "caesar.task.depth": 1,
      "caesar.report.status": "success",
      "caesar.task.outcome": "succeeded",
      "caesar.changes.verified_by": "git",
      "caesar.changes.count": 0,
    });
    expect(tasks.get(left!)!.attributes).toMatchObject({
      "gen_ai.agent.name": "worker",
      "caesar.task.parent_id": top,
      "caesar.task.depth": 2,
      "caesar.task.mode": "read-only",
    });
    expect(parent.resource).toMatchObject({
      "service.name": "caesar-under-test",
      "deployment.environment.name": "test",
      team: "a,b",
    });

    // The phases: children of the task's span.
    const phasesOf = (span: ReceivedSpan) =>
      spans.filter((other) => other.parentSpanId === span.spanId).map((other) => other.name);
    expect(phasesOf(parent)).toEqual(
      expect.arrayContaining(["caesar.slot_wait", "caesar.isolate", "caesar.attempt", "caesar.finish"]),
    );
    // A child's task span sits beside the parent's phases, under the parent's span.
    expect(phasesOf(parent)).toEqual(expect.arrayContaining(["invoke_agent worker", "invoke_agent helper"]));

    // The agents got the W3C trace context of their own task's span.
    const traceparent = (id: string) => readState(root, id).report.next_steps[0];
    expect(traceparent(top)).toBe(`TRACEPARENT=00-${parent.traceId}-${parent.spanId}-01`);
    expect(traceparent(left!)).toBe(`TRACEPARENT=00-${parent.traceId}-${tasks.get(left!)!.spanId}-01`);
    // Posted as OTLP/HTTP JSON to <endpoint>/v1/traces.
    expect(receiver.requests.every((request) => request.path === "/v1/traces")).toBe(true);
    expect(receiver.requests[0]!.contentType).toContain("application/json");
  });

  it("an agent that speaks OpenTelemetry joins the trace: its own span nests under its task's, through TRACEPARENT", async () => {
    const receiver = new OtlpReceiver();
    receivers.push(receiver);
    const endpoint = await receiver.listen();
    const root = project(`[[agent]]\nid = "traced"\nbin = "${join(FIXTURE_BIN, "traced-agent.mjs")}"\n`);
    roots.push(root);
    const result = await runCaesar(["run", "--json", "--agent", "traced", "think"], {
      cwd: root,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" },
    });
    expect(result.code, result.stderr).toBe(0);
    const id = parseJsonOutput<{ task_id: string; report: { summary: string } }>(result);
    expect(id.report.summary).toBe("posted a span of its own: HTTP 200");
    const spans = await receiver.waitFor((received) =>
      received.some((span) => span.attributes["gen_ai.agent.id"] === id.task_id),
    );
    const task = spans.find((span) => span.attributes["gen_ai.agent.id"] === id.task_id)!;
    const own = spans.find((span) => span.name === "agent.think")!;
    expect(own).toMatchObject({ traceId: task.traceId, parentSpanId: task.spanId });
    expect(own.resource["service.name"]).toBe("traced-agent");
  });

  it("a write task's verified change is on its span, and `caesar apply` adds its own span to the task's trace", async () => {
    const receiver = new OtlpReceiver();
    receivers.push(receiver);
    const endpoint = await receiver.listen();
    const root = project();
    roots.push(root);
    const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" };
    const result = await runCaesar(
      [
        "run",
        "--json",
        "--agent",
        "reference",
        "--isolation",
        "worktree",
        "--check",
        "test -f hello.txt",
        'create hello.txt containing "hi"',
      ],
      { cwd: root, env: otel },
    );
    expect(result.code, result.stderr).toBe(0);
    const id = parseJsonOutput<{ task_id: string }>(result).task_id;
    // Applied from a shell without the OTEL_* variables: the task's plan says where its spans go.
    const applied = await runCaesar(["apply", id], {
      cwd: root,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: "", OTEL_EXPORTER_OTLP_PROTOCOL: "" },
    });
    expect(applied.code, applied.stderr).toBe(0);
    const spans = await receiver.waitFor(
      (received) =>
        received.some((span) => span.name === "caesar.apply") &&
        received.some((span) => span.attributes["gen_ai.agent.id"] === id),
    );
    const task = spans.find((span) => span.attributes["gen_ai.agent.id"] === id)!;
    expect(task.attributes).toMatchObject({
      "caesar.changes.verified_by": "git",
      "caesar.changes.count": 1,
      "caesar.changes.paths": ["hello.txt"],
      "caesar.task.isolation": "worktree",
    });
    expect(typeof task.attributes["caesar.result_commit"]).toBe("string");
    // The agent's tool calls, under its run; the check, a caesar.check span (not a tool call of the agent's).
    const run = spans.find((span) => span.name === "caesar.attempt" && span.parentSpanId === task.spanId)!;
    const edit = spans.find((span) => span.name === "execute_tool edit_file")!;
    expect(edit).toMatchObject({ parentSpanId: run.spanId });
    expect(edit.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "edit_file",
    });
    const check = spans.find((span) => span.name === "caesar.check")!;
    expect(check).toMatchObject({ parentSpanId: task.spanId });
    expect(check.attributes).toMatchObject({
      "caesar.check.command": "test -f hello.txt",
      "caesar.check.passed": true,
    });
    expect(check.startMs).toBeGreaterThanOrEqual(run.endMs);
    expect(spans.some((span) => span.name === "execute_tool check")).toBe(false);
    const apply = spans.find((span) => span.name === "caesar.apply")!;
    expect(apply).toMatchObject({ traceId: task.traceId, parentSpanId: task.spanId });
    expect(apply.attributes).toMatchObject({
      "caesar.task.id": id,
      "caesar.apply.by": "cli",
      "caesar.apply.files": 1,
    });
  });

  it("a conductor service killed with -9 mid-task: the next one ends the task's span, the same one, exactly once", async () => {
    const receiver = new OtlpReceiver();
    receivers.push(receiver);
    const endpoint = await receiver.listen();
    const root = project(
      `[[agent]]\nid = "napper"\nbin = "${join(FIXTURE_BIN, "napper.sh")}"\nargs = ["{{prompt}}"]\nenv = { NAP_S = "3" }\n`,
    );
    roots.push(root);
    const started = await runCaesar(
      ["run", "--detach", "--json", "--agent", "napper", "nap through a crash"],
      {
        cwd: root,
        env: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" },
      },
    );
    expect(started.code, started.stderr).toBe(0);
    const id = parseJsonOutput<{ task_id: string }>(started).task_id;
    const until = async (what: string, probe: () => boolean) => {
      for (
        const stop = Date.now() + 30_000;
        !probe();
        await new Promise((resolve) => setTimeout(resolve, 50))
      )
        if (Date.now() > stop) throw new Error(`timed out waiting for ${what}`);
    };
    await until("the agent to start", () => readState(root, id).agent_process !== null);
    const conductor = readState(root, id).conductor.pid as number;
    process.kill(conductor, "SIGKILL");
    await until("the service to die", () => {
      try {
        process.kill(conductor, 0);
        return false;
      } catch {
        return true;
      }
    });
    // The next command that looks starts a service, which takes the task over.
    await runCaesar(["ps"], { cwd: root });
    await until("the task to finish", () => readState(root, id).phase === "finished");
    const planned = readPlan(root, id).trace;
    const spans = await receiver.waitFor((received) =>
      received.some((span) => span.attributes["gen_ai.agent.id"] === id),
    );
    // Give a duplicate the time to arrive, if there were one.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const tasks = spans.filter((span) => span.attributes["gen_ai.agent.id"] === id);
    expect(tasks).toHaveLength(1);
    expect(tasks[0]).toMatchObject({ traceId: planned.trace_id, spanId: planned.span_id });
    expect(tasks[0]!.attributes).toMatchObject({ "caesar.report.status": "success", "caesar.attempts": 1 });
    // Its run is told from its records, by the service that ended it.
    expect(
      spans.some((span) => span.name === "caesar.attempt" && span.parentSpanId === planned.span_id),
    ).toBe(true);
  });

  it("off by default: no trace settings in the plan, no TRACEPARENT for the agent", async () => {
    const root = project();
    roots.push(root);
    const result = await runCaesar(
      [
        "run",
        "--json",
        "--agent",
        "worker",
        JSON.stringify({ name: "plain", calls: [], env: ["TRACEPARENT"] }),
      ],
      {
        cwd: root,
        env: { CAESAR_BIN, OTEL_EXPORTER_OTLP_ENDPOINT: "", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "" },
      },
    );
    expect(result.code, result.stderr).toBe(0);
    const id = parseJsonOutput<{ task_id: string }>(result).task_id;
    expect(readPlan(root, id).telemetry).toBeNull();
    expect(readState(root, id).report.next_steps).toEqual(["TRACEPARENT="]);
  });

  it("a collector that never answers: the task finishes all the same, and the service counts the spans it dropped", async () => {
    const silent = new OtlpReceiver(false);
    receivers.push(silent);
    const endpoint = await silent.listen();
    // [telemetry] in the configuration, http/protobuf (the default protocol).
    const root = project(`[telemetry]\nendpoint = "${endpoint}"\n`);
    roots.push(root);
    const result = await runCaesar(
      ["run", "--json", "--agent", "worker", JSON.stringify({ name: "w", calls: [] })],
      {
        cwd: root,
        env: { CAESAR_BIN, OTEL_EXPORTER_OTLP_ENDPOINT: "", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "" },
        timeoutMs: 60_000,
      },
    );
    expect(result.code, result.stderr).toBe(0);
    const id = parseJsonOutput<{ task_id: string }>(result).task_id;
    expect(readState(root, id)).toMatchObject({ phase: "finished", report_status: "success" });
    expect(readPlan(root, id).telemetry).toMatchObject({
      traces_url: `${endpoint}/v1/traces`,
      protocol: "http/protobuf",
    });
    // The export times out in the background; then the service says what it dropped.
    let dropped = 0;
    for (let tries = 0; tries < 100 && dropped === 0; tries++) {
      const status = parseJsonOutput<{ service: { telemetry: { dropped: number } | null } | null }>(
        await runCaesar(["service", "status", "--json"], { cwd: root }),
      );
      dropped = status.service?.telemetry?.dropped ?? 0;
      if (dropped === 0) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(dropped).toBeGreaterThan(0);
    const shown = await runCaesar(["service", "status"], { cwd: root });
    expect(shown.stdout).toMatch(/traces +\d+ span\(s\) exported, \d+ dropped/);
    expect(silent.requests.length).toBeGreaterThan(0);
    expect(silent.requests[0]!.contentType).toContain("application/x-protobuf");
  });
});
