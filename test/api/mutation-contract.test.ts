import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { MutationRequestSchema } from "../../src/api/mutation-schema.js";
import { type InProcessApi, openApi, TOKEN } from "../helpers/api.js";
import { git, makeRepo, writeConfig } from "../helpers/repo.js";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
type Json = any;

let root: string;
let api: InProcessApi;

beforeAll(async () => {
  root = makeRepo({ "README.md": "# mutations\n" });
  writeConfig(root, "", ["asker", "hang"]);
  git(root, "add", ".");
  git(root, "commit", "-qm", "config");
  api = await openApi(root);
});

afterAll(() => api?.close());

async function json(response: Response): Promise<Json> {
  return response.json();
}

async function ok(response: Response | Promise<Response>): Promise<Json> {
  const r = await response;
  const body = await json(r);
  expect(r.status, JSON.stringify(body)).toBe(200);
  return body;
}

async function current() {
  const state = await api.state();
  return { runId: state.runId, revision: state.version };
}

/** Wait until the index sees the task in `phase` (reading its files, not waiting on a clock). */
async function waitFor(id: string, predicate: (task: Json) => boolean, what: string): Promise<Json> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    await api.ctx.index.refresh([id]);
    const body = await json(await api.request(`/api/tasks/${id}`));
    if (predicate(body)) return body;
    if (Date.now() > deadline) throw new Error(`task ${id} never got ${what}: ${JSON.stringify(body.task)}`);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

async function delegate(args: Record<string, unknown>): Promise<{ taskId: string; changeNumber: number }> {
  const body = await ok(api.mutate("task.delegate", args));
  return body.result;
}

describe("discovery", () => {
  it("its own protocol id, capabilities and schema (generated from the zod schema it validates with)", async () => {
    const capabilities = await ok(api.request("/api/mutate/v1"));
    expect(capabilities.protocol).toBe("cz-mutate/1");
    expect(capabilities.operations.map((op: Json) => op.name)).toEqual([
      "task.delegate",
      "task.cancel",
      "question.answer",
      "change.apply",
    ]);
    expect(capabilities.endpoints.request).toBe("POST /api/mutate/v1/request");
    // Seed 004's discovery path answers with the same document.
    expect(await ok(api.request("/api/commons/protocol"))).toEqual(capabilities);
    const schema = await ok(api.request("/api/mutate/v1/schema"));
    expect(schema).toEqual(z.toJSONSchema(MutationRequestSchema, { target: "draft-2020-12", io: "input" }));
  });
});

describe("authentication and origin", () => {
  const send = (headers: Record<string, string>, body: unknown = { protocol: "cz-mutate/1" }) =>
    api.request("/api/mutate/v1/request", {
      method: "POST",
      headers: { "Content-Type": "application/json", ...headers },
      body: JSON.stringify(body),
    });

  it("needs the bearer token (or a session): none is 401 authentication_required, a wrong one 401 invalid_token", async () => {
    const none = await send({ "X-Commit-Zero": "local-demo" });
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toContain("Bearer");
    expect((await json(none)).error.code).toBe("authentication_required");
    const wrong = await send({ "X-Commit-Zero": "local-demo", Authorization: "Bearer nope" });
    expect(wrong.status).toBe(401);
    expect((await json(wrong)).error.code).toBe("invalid_token");
  });

  it("needs the operator header, and refuses cross-origin browser requests even with the token", async () => {
    const noHeader = await send({ Authorization: `Bearer ${TOKEN}` });
    expect(noHeader.status).toBe(403);
    expect((await json(noHeader)).error.code).toBe("operator_header_required");
    const origin = await send({
      "X-Commit-Zero": "local-demo",
      Authorization: `Bearer ${TOKEN}`,
      Origin: "http://attacker.example",
    });
    expect(origin.status).toBe(403);
    expect((await json(origin)).error.code).toBe("cross_origin");
    const site = await send({
      "X-Commit-Zero": "local-demo",
      Authorization: `Bearer ${TOKEN}`,
      "Sec-Fetch-Site": "cross-site",
    });
    expect(site.status).toBe(403);
    const same = await send({
      "X-Commit-Zero": "local-demo",
      Authorization: `Bearer ${TOKEN}`,
      Origin: "http://127.0.0.1:4999",
      "Sec-Fetch-Site": "same-origin",
    });
    expect(same.status).toBe(400); // through the guards, to validation
  });
});

describe("task.delegate and change.apply", () => {
  it("starts a real task, then applies its change once the user's revision has seen it finish", async () => {
    const basis = await current();
    const started = await ok(
      api.mutate(
        "task.delegate",
        { objective: 'create made.txt containing "by http"', agent: "reference" },
        basis,
      ),
    );
    expect(started).toMatchObject({
      protocol: "cz-mutate/1",
      runId: basis.runId,
      basedOn: basis.revision,
      provenance: "observed",
      operation: "task.delegate",
    });
    expect(started.revision).toBeGreaterThan(basis.revision);
    const { taskId, changeNumber } = started.result;
    expect(taskId).toMatch(/^t_[0-9a-f]{8}$/);
    expect(started.result.task).toMatchObject({ id: taskId, changeNumber, agent: "reference" });
    const plan = JSON.parse(readFileSync(join(root, ".caesar", "tasks", taskId, "plan.json"), "utf8"));
    expect(plan.requested_by).toBe("http");

    const finished = await waitFor(taskId, (body) => body.task.phase === "finished", "finished");
    expect(finished.task.changeStatus).toBe("ready");

    // Based on what was seen before it finished: stale, and nothing happens.
    const stale = await api.mutate(
      "change.apply",
      { number: changeNumber },
      { runId: started.runId, revision: started.revision },
    );
    expect(stale.status).toBe(409);
    const staleBody = await json(stale);
    expect(staleBody.error.code).toBe("stale_revision");
    expect(staleBody.error.summary).toContain(`Change #${changeNumber} changed at revision`);
    expect(git(root, "diff", "--cached", "--name-only")).toBe("");

    const applied = await ok(
      api.mutate(
        "change.apply",
        { number: changeNumber },
        { runId: finished.runId, revision: finished.revision },
      ),
    );
    expect(applied.result).toMatchObject({ number: changeNumber, taskId, files: ["made.txt"] });
    expect(git(root, "diff", "--cached", "--name-only")).toBe("made.txt");
    const state = JSON.parse(readFileSync(join(root, ".caesar", "tasks", taskId, "state.json"), "utf8"));
    expect(state.applied).toMatchObject({ by: "http", files: ["made.txt"] });

    const again = await api.mutate("change.apply", { number: changeNumber });
    expect(again.status).toBe(422);
    expect((await json(again)).error.code).toBe("already_applied");

    const timeline = await ok(api.query("timeline.read", { actor: "user", limit: 1 }));
    expect(timeline.result.entries[0]).toMatchObject({ taskId, kind: "apply", actor: "user" });
  });

  it("refusals of the engine are 422 with its code; a missing change is 404", async () => {
    const unknownAgent = await api.mutate("task.delegate", { objective: "x", agent: "no-such-agent" });
    expect(unknownAgent.status).toBe(422);
    expect((await json(unknownAgent)).error.code).toBe("unknown_agent");
    const noAgent = await api.mutate("task.delegate", { objective: "x" });
    expect(noAgent.status).toBe(422);
    expect((await json(noAgent)).error.code).toBe("no_agent");
    const missing = await api.mutate("change.apply", { number: 4242 });
    expect(missing.status).toBe(404);
    expect((await json(missing)).error.code).toBe("change_not_found");
  });
});

describe("task.delegate with checks", () => {
  it("runs them after the agent; the task summary and the report say every one passed", async () => {
    const { taskId } = await delegate({
      objective: 'create made.txt containing "checked"',
      agent: "reference",
      checks: ["grep -q checked made.txt"],
      acceptance_criteria: ["run: test -s made.txt", "made.txt says checked"],
    });
    const finished = await waitFor(taskId, (body) => body.task.phase === "finished", "finished");
    expect(finished.task.checks).toEqual({ total: 2, passed: 2, state: "passed" });
    expect(finished.task.attempts).toBe(1);
    expect(finished.report.checks.map((check: Json) => [check.command, check.from, check.passed])).toEqual([
      ["grep -q checked made.txt", "request", true],
      ["test -s made.txt", "acceptance", true],
    ]);
    const list = await ok(api.request("/api/tasks?limit=200"));
    expect(list.tasks.find((task: Json) => task.id === taskId).checks.state).toBe("passed");
  });

  it("a check that is not a command is refused (422) before anything starts", async () => {
    const refused = await api.mutate("task.delegate", {
      objective: "x",
      agent: "reference",
      checks: ["no-such-program-here"],
    });
    expect(refused.status).toBe(422);
    expect((await json(refused)).error.code).toBe("check_not_a_command");
  });
});

describe("question.answer", () => {
  it("answers a question an agent asked; the agent receives it; a second answer is a 409", async () => {
    const { taskId } = await delegate({ objective: "ask me", agent: "asker" });
    const asked = await waitFor(taskId, (body) => body.questions.length === 1, "a question");
    expect(asked.questions[0]).toMatchObject({
      id: "q_fixture01",
      question: "Which colour should the button be?",
      options: ["red", "blue"],
      answer: null,
    });
    expect(asked.task.pendingQuestions).toBe(1);

    const unknown = await api.mutate("question.answer", {
      task_id: taskId,
      question_id: "q_nope",
      answer: "x",
    });
    expect(unknown.status).toBe(404);
    expect((await json(unknown)).error.code).toBe("unknown_question");

    const answered = await ok(
      api.mutate(
        "question.answer",
        { task_id: taskId, question_id: "q_fixture01", answer: "blue" },
        { runId: asked.runId, revision: asked.revision },
      ),
    );
    expect(answered.result).toMatchObject({ taskId, questionId: "q_fixture01", answeredBy: "http" });

    const done = await waitFor(taskId, (body) => body.task.phase === "finished", "finished");
    expect(done.report.summary).toBe("The answer was: blue");
    expect(done.questions[0].answer).toMatchObject({ answer: "blue", answeredBy: "http" });

    const second = await api.mutate("question.answer", {
      task_id: taskId,
      question_id: "q_fixture01",
      answer: "red",
    });
    expect(second.status).toBe(409);
    expect((await json(second)).error.code).toBe("already_answered");
    const staleSecond = await api.mutate(
      "question.answer",
      { task_id: taskId, question_id: "q_fixture01", answer: "red" },
      { runId: asked.runId, revision: asked.revision },
    );
    expect(staleSecond.status).toBe(409);
    expect((await json(staleSecond)).error.code).toBe("stale_revision");
  });
});

describe("task.cancel", () => {
  it("stops a running task and its agent; cancelling a finished task changes nothing", async () => {
    const { taskId } = await delegate({ objective: "hang around", agent: "hang" });
    const running = await waitFor(taskId, (body) => body.task.phase === "running", "running");
    const cancelled = await ok(
      api.mutate("task.cancel", { task_id: taskId }, { runId: running.runId, revision: running.revision }),
    );
    expect(cancelled.result).toMatchObject({
      taskId,
      cancelled: true,
      phase: "finished",
      outcome: "cancelled",
    });
    const again = await ok(api.mutate("task.cancel", { task_id: taskId }));
    expect(again.result).toMatchObject({ cancelled: false, outcome: "cancelled" });
    const user = await ok(api.query("timeline.read", { actor: "user", repo: taskId }));
    expect(user.result.entries.map((e: Json) => [e.kind, e.data.by])).toEqual([["cancel", "http"]]);
  });

  it("an unknown task is 404; an invalid id never reaches the file system (400)", async () => {
    const missing = await api.mutate("task.cancel", { task_id: "t_00000000" });
    expect(missing.status).toBe(404);
    expect((await json(missing)).error.code).toBe("task_not_found");
    const traversal = await api.mutate("task.cancel", { task_id: "../../etc" });
    expect(traversal.status).toBe(400);
    expect((await json(traversal)).error.code).toBe("invalid_argument");
  });
});

describe("revisions and replays", () => {
  it("a stale runId, a revision never issued, and a replayed requestId are 409s; nothing runs twice", async () => {
    const basis = await current();
    const staleRun = await api.mutate(
      "task.delegate",
      { objective: "x", agent: "reference" },
      { runId: randomUUID(), revision: basis.revision },
    );
    expect(staleRun.status).toBe(409);
    expect((await json(staleRun)).error.code).toBe("stale_run");
    const future = await api.mutate(
      "task.delegate",
      { objective: "x", agent: "reference" },
      { ...basis, revision: basis.revision + 1000 },
    );
    expect(future.status).toBe(409);
    expect((await json(future)).error.code).toBe("stale_revision");

    const requestId = randomUUID();
    const before = api.ctx.index.size;
    await ok(
      api.mutate(
        "task.delegate",
        { objective: 'create once.txt containing "1"', agent: "reference" },
        { ...basis, requestId },
      ),
    );
    const replay = await api.mutate(
      "task.delegate",
      { objective: 'create once.txt containing "1"', agent: "reference" },
      { ...(await current()), requestId },
    );
    expect(replay.status).toBe(409);
    const body = await json(replay);
    expect(body.error.code).toBe("duplicate_request");
    expect(body.requestId).toBe(requestId);
    await api.ctx.index.refresh();
    expect(api.ctx.index.size).toBe(before + 1);
  });
});
