import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  AgentCapabilitiesSchema,
  ErrorResponseSchema,
  MutationResponseSchema,
  SessionSchema,
  StreamHelloSchema,
  TaskDiffSchema,
  TaskEventMessageSchema,
  TaskListPageSchema,
  TaskPageSchema,
  TasksUpdateSchema,
} from "../../src/api/response-schema.js";
import { type RunningServer, startServer } from "../../src/api/server.js";
import type * as z from "../../src/support/zod.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { makeRepo } from "../helpers/repo.js";
import { SseClient } from "../helpers/sse.js";
import { writeQuestion, writeTask } from "../helpers/workspace.js";

/**
 * The dashboard's shapes (src/api/response-schema.ts) against what a real `caesar serve` answers: every
 * read, every stream message and every mutation response the dashboard uses, parsed with its schema. The
 * schemas are strict, so a field the server adds or drops without the schema (which web/ is type-checked
 * against) fails here.
 */

const TOKEN = "r".repeat(40);
let root: string;
let server: RunningServer;
/** A task run for real (the reference agent, a check): report, checks, attempts, a diff. */
let realTask: string;

/** Parse with `schema`, failing with every problem and the body when it does not fit. */
function expectShape<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const parsed = schema.safeParse(body);
  if (!parsed.success)
    throw new Error(`${JSON.stringify(parsed.error.issues, null, 2)}\nin\n${JSON.stringify(body, null, 2)}`);
  return parsed.data;
}

async function get(path: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(new URL(path, server.url));
  return { status: response.status, body: await response.json() };
}

async function mutate(operation: string, args: unknown): Promise<{ status: number; body: unknown }> {
  const state = (await (await fetch(new URL("/api/state", server.url))).json()) as {
    runId: string;
    version: number;
  };
  const response = await fetch(new URL("/api/mutate/v1/request", server.url), {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "X-Commit-Zero": "local-demo",
      Authorization: `Bearer ${TOKEN}`,
    },
    body: JSON.stringify({
      protocol: "cz-mutate/1",
      requestId: randomUUID(),
      runId: state.runId,
      revision: state.version,
      operation,
      arguments: args,
    }),
  });
  return { status: response.status, body: await response.json() };
}

beforeAll(async () => {
  root = makeRepo({ "README.md": "# shapes\n" });
  const run = await runCaesar(
    [
      "run",
      "--json",
      "--agent",
      "reference",
      "--check",
      "test -f hello.txt",
      'create hello.txt containing "hi"',
    ],
    { cwd: root },
  );
  expect(run.code, run.stderr).toBe(0);
  realTask = parseJsonOutput<{ task_id: string }>(run).task_id;
  // A task in the states a real run does not reach here: running, waiting for a slot, cancel requested,
  // applied, with an answered and a pending question.
  const asking = writeTask(root, {
    id: "t_asking01",
    changeNumber: 50,
    phase: "running",
    state: {
      conductor: { pid: process.pid },
      waiting_for_slot: [{ task_id: realTask, pid: process.pid, since: "2030-01-01T00:00:00.000Z" }],
      cancel_requested: { at: "2030-01-01T00:00:10.000Z", by: "cli" },
      role: "reviewer",
    },
    events: [
      { type: "started", agent: "alpha" },
      { type: "question", question_id: "q_1", question: "Which one?", options: ["a", "b"] },
    ],
  });
  writeQuestion(asking, "t_asking01", "q_1", "Which one?", "the first");
  writeQuestion(asking, "t_asking01", "q_2", "And then?");
  writeTask(root, {
    id: "t_applied1",
    changeNumber: 51,
    state: {
      applied: { at: "2030-01-01T00:01:00.000Z", by: "cli", head: null, files: ["x.txt"] },
      error: { code: "agent_failed", message: "it failed" },
    },
  });
  server = await startServer({ root, version: "test", port: 0, token: TOKEN, writeAddress: false });
});

afterAll(async () => {
  await server?.close();
});

describe("the dashboard's reads", () => {
  it("GET /api/tasks: a page of summaries", async () => {
    const { status, body } = await get("/api/tasks?limit=2");
    expect(status).toBe(200);
    const page = expectShape(TaskListPageSchema, body);
    expect(page.tasks).toHaveLength(2);
    expect(page.nextBefore).not.toBeNull();
    const all = expectShape(TaskListPageSchema, (await get("/api/tasks")).body);
    expect(all.tasks.map((task) => task.id).sort()).toEqual(["t_applied1", "t_asking01", realTask].sort());
  });

  it("GET /api/tasks/:id: each task described, with its report and questions", async () => {
    for (const id of [realTask, "t_asking01", "t_applied1"]) {
      const { status, body } = await get(`/api/tasks/${id}`);
      expect(status).toBe(200);
      expectShape(TaskPageSchema, body);
    }
    const real = expectShape(TaskPageSchema, (await get(`/api/tasks/${realTask}`)).body);
    expect(real.report?.checks).toHaveLength(1);
    const asking = expectShape(TaskPageSchema, (await get("/api/tasks/t_asking01")).body);
    expect(asking.questions.map((q) => q.answer?.answer ?? null)).toEqual(["the first", null]);
    expect(asking.task.waitingForSlot).toEqual([realTask]);
  });

  it("GET /api/tasks/:id/diff: the verified diff, or why there is none", async () => {
    const real = expectShape(TaskDiffSchema, (await get(`/api/tasks/${realTask}/diff`)).body);
    expect(real.diff?.files).toEqual([{ path: "hello.txt", action: "added" }]);
    expectShape(TaskDiffSchema, (await get("/api/tasks/t_applied1/diff")).body);
  });

  it("GET /api/session and GET /api/agent/v1", async () => {
    const session = expectShape(SessionSchema, (await get("/api/session")).body);
    expect(session.authenticated).toBe(false);
    expectShape(AgentCapabilitiesSchema, (await get("/api/agent/v1")).body);
  });

  it("an error: the body every refusal has", async () => {
    const invalid = await get("/api/tasks/..%2Fx");
    expect(invalid.status).toBe(400);
    expectShape(ErrorResponseSchema, invalid.body);
    const missing = await get("/api/tasks/t_nothere1");
    expect(missing.status).toBe(404);
    expect(expectShape(ErrorResponseSchema, missing.body).error.code).toBe("task_not_found");
    const refused = await mutate("task.cancel", { task_id: "t_nothere1" });
    expect(refused.status).toBe(404);
    expect(expectShape(ErrorResponseSchema, refused.body).requestId).toEqual(expect.any(String));
  });
});

describe("the dashboard's streams and mutations", () => {
  it("a task's stream: hello, its events by ordinal, the task described", async () => {
    const client = await SseClient.connect(new URL(`/api/tasks/${realTask}/events`, server.url).href);
    await client.until((m) => m.some((x) => x.event === "task"), "the task");
    const [hello] = client.of("hello");
    expectShape(StreamHelloSchema, JSON.parse(hello!.data));
    const events = client.of("caesar").map((m) => expectShape(TaskEventMessageSchema, JSON.parse(m.data)));
    expect(events.length).toBeGreaterThan(2);
    expect(events.map((m) => m.ordinal)).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1)?.event?.type).toBe("finished");
    expectShape(TaskPageSchema, JSON.parse(client.of("task")[0]!.data));
    client.close();
  });

  it("each mutation's response, and the workspace stream's update it causes", async () => {
    const client = await SseClient.connect(new URL("/api/stream", server.url).href);
    await client.until((m) => m.some((x) => x.event === "hello"), "hello");
    expectShape(StreamHelloSchema, JSON.parse(client.of("hello")[0]!.data));

    const delegated = await mutate("task.delegate", {
      objective: 'create b.txt containing "b"',
      agent: "reference",
    });
    expect(delegated.status, JSON.stringify(delegated.body)).toBe(200);
    const delegate = expectShape(MutationResponseSchema, delegated.body);
    expect(delegate.operation).toBe("task.delegate");
    await client.until((m) => m.some((x) => x.event === "tasks"), "a tasks update");
    for (const update of client.of("tasks")) expectShape(TasksUpdateSchema, JSON.parse(update.data));

    const answered = await mutate("question.answer", {
      task_id: "t_asking01",
      question_id: "q_2",
      answer: "stop",
    });
    expect(answered.status, JSON.stringify(answered.body)).toBe(200);
    expectShape(MutationResponseSchema, answered.body);

    const cancelled = await mutate("task.cancel", { task_id: "t_applied1" });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expectShape(MutationResponseSchema, cancelled.body);

    const number = expectShape(TaskPageSchema, (await get(`/api/tasks/${realTask}`)).body).task.changeNumber;
    const applied = await mutate("change.apply", { number });
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    expectShape(MutationResponseSchema, applied.body);
    client.close();
  });
});
