import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { QueryRequestSchema } from "../../src/api/query-schema.js";
import { type InProcessApi, openApi } from "../helpers/api.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { besidesSandbox } from "../helpers/findings.js";
import { git, makeRepo } from "../helpers/repo.js";
import { appendEvents, writeQuestion, writeTask } from "../helpers/workspace.js";

interface Entry {
  position: number;
  actor: string;
  kind: string;
  type: string;
  taskId: string;
  changeNumber: number | null;
  repository: string;
  ordinal: number | null;
  data: Record<string, unknown> | null;
}
interface Page {
  entries: Entry[];
  nextBefore: number | null;
}

let root: string;
let api: InProcessApi;
let realTask: string;
let projectId: string;

beforeAll(async () => {
  root = makeRepo({
    "README.md": "# contract\n",
    "src/greet.js": 'export const greet = (n) => "Hello " + n;\n',
  });
  const run = await runCaesar(["run", "--json", "--agent", "reference", 'create hello.txt containing "hi"'], {
    cwd: root,
  });
  expect(run.code).toBe(0);
  realTask = parseJsonOutput<{ task_id: string }>(run).task_id;
  writeTask(root, {
    id: "t_alpha001",
    agent: "alpha",
    changeNumber: 101,
    events: [
      { type: "started", agent: "alpha" },
      { type: "message", text: "alpha says hi" },
      { type: "finished", status: "success", summary: "done" },
    ],
  });
  const beta = writeTask(root, {
    id: "t_beta0001",
    agent: "beta",
    changeNumber: 102,
    state: { applied: { at: "2030-01-01T00:01:00.000Z", by: "cli", head: null, files: ["x.txt"] } },
    events: [{ type: "started", agent: "beta" }],
  });
  appendEvents(
    beta,
    "t_beta0001",
    [
      { type: "question", question_id: "q_1", question: "Which one?" },
      { type: "answer", question_id: "q_1", answer: "the first", by: "cli" },
      { type: "finished", status: "success" },
    ],
    10,
  );
  writeQuestion(beta, "t_beta0001", "q_1", "Which one?", "the first");
  api = await openApi(root);
  projectId = (await json(await api.request("/api/agent/v1"))).repositories.project;
});

afterAll(() => api?.close());

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
type Json = any;

async function json(response: Response): Promise<Json> {
  return response.json();
}

async function ok<T>(response: Response | Promise<Response>): Promise<T> {
  const r = await response;
  const body = await json(r);
  expect(r.status, JSON.stringify(body)).toBe(200);
  return body as T;
}

async function page(args: Record<string, unknown>): Promise<Page> {
  return (await ok<{ result: Page }>(api.query("timeline.read", args))).result;
}

describe("GET endpoints", () => {
  it("capabilities name the protocol, operations, endpoints, boundaries and provenance", async () => {
    const body = await ok<Json>(api.request("/api/agent/v1"));
    expect(body.protocol).toBe("cz-agent/1");
    expect(body.provenance).toBe("observed");
    expect(body.readOnly).toBe(true);
    expect(body.operations.map((op: { name: string }) => op.name)).toEqual([
      "timeline.read",
      "repository.read",
      "change.read",
    ]);
    expect(body.endpoints).toEqual({
      capabilities: "GET /api/agent/v1",
      schema: "GET /api/agent/v1/schema",
      state: "GET /api/state",
      query: "POST /api/agent/v1/query",
    });
    expect(body.request.headers["X-Commit-Zero"]).toBe("local-demo");
    expect(body.repositories.project).toBe(root.split("/").at(-1)!.toLowerCase());
    expect(body.actors).toEqual(expect.arrayContaining(["alpha", "beta", "reference", "user"]));
    expect(body.mutations).toEqual({
      protocol: "cz-mutate/1",
      discovery: "GET /api/commons/protocol",
      capabilities: "GET /api/mutate/v1",
    });
    expect(body.boundaries.length).toBeGreaterThan(0);
  });

  it("the schema is the JSON Schema generated from the zod schema the server validates with", async () => {
    const served = await ok<Record<string, unknown>>(api.request("/api/agent/v1/schema"));
    expect(served).toEqual(z.toJSONSchema(QueryRequestSchema, { target: "draft-2020-12", io: "input" }));
    const ajv = new Ajv2020.default({ strict: false });
    addFormats.default(ajv);
    const validate = ajv.compile(served);
    const state = await api.state();
    const envelope = {
      protocol: "cz-agent/1",
      requestId: randomUUID(),
      runId: state.runId,
      revision: state.version,
      operation: "change.read",
      arguments: { number: 1 },
    };
    expect(validate(envelope)).toBe(true);
    expect(validate({ ...envelope, extra: 1 })).toBe(false);
  });

  it("state gives the runId (a UUID) and the version", async () => {
    const state = await ok<{ runId: string; version: number; provenance: string }>(api.request("/api/state"));
    expect(state.runId).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number.isInteger(state.version)).toBe(true);
    expect(state.provenance).toBe("observed");
  });

  it("an unknown endpoint is a JSON 404", async () => {
    const response = await api.request("/api/agent/v2");
    expect(response.status).toBe(404);
    expect((await json(response)).error.code).toBe("not_found");
  });
});

describe("timeline.read", () => {
  it("returns every task's events newest first, with the event documents read back from events.jsonl", async () => {
    const result = await page({ limit: 100 });
    const positions = result.entries.map((e) => e.position);
    expect(positions).toEqual([...positions].sort((a, b) => b - a));
    expect(result.nextBefore).toBeNull();
    const alpha = result.entries.filter((e) => e.taskId === "t_alpha001");
    expect(alpha.map((e) => e.type)).toEqual(["finished", "message", "started"]);
    expect(alpha[1]!.data).toMatchObject({
      protocol: "caesar.event/v1",
      type: "message",
      text: "alpha says hi",
      task_id: "t_alpha001",
    });
    expect(alpha[1]).toMatchObject({
      actor: "alpha",
      kind: "event",
      changeNumber: 101,
      ordinal: 2,
      repository: projectId,
    });
    const real = result.entries.filter((e) => e.taskId === realTask);
    const lines = readFileSync(join(root, ".caesar", "tasks", realTask, "events.jsonl"), "utf8")
      .trim()
      .split("\n");
    expect(real).toHaveLength(lines.length);
    expect(real.map((e) => e.data).reverse()).toEqual(lines.map((line) => JSON.parse(line)));
    expect(real[0]!.repository).toBe(realTask);
  });

  it("filters by actor: an agent's entries, or the user's answers and applies", async () => {
    const beta = await page({ actor: "beta" });
    expect(beta.entries.map((e) => e.type)).toEqual(["finished", "question", "started"]);
    const user = await page({ actor: "user" });
    expect(user.entries.map((e) => [e.taskId, e.kind, e.type])).toEqual([
      ["t_beta0001", "apply", "apply"],
      ["t_beta0001", "event", "answer"],
    ]);
    expect(user.entries[0]!.data).toEqual({ by: "cli", head: null, files: ["x.txt"] });
    expect(user.entries[1]!.data).toMatchObject({ answer: "the first" });
    expect((await page({ actor: "nobody" })).entries).toEqual([]);
  });

  it("filters by repository: the project's is everything, a worktree's is its task", async () => {
    const all = await page({ limit: 100 });
    expect((await page({ repo: projectId, limit: 100 })).entries).toEqual(all.entries);
    const worktree = await page({ repo: realTask, limit: 100 });
    expect(worktree.entries.length).toBeGreaterThan(0);
    expect(new Set(worktree.entries.map((e) => e.taskId))).toEqual(new Set([realTask]));
    const both = await page({ repo: realTask, actor: "user" });
    expect(both.entries).toEqual([]);
  });

  it("pages with before/nextBefore: all entries exactly once, in order", async () => {
    const all = (await page({ limit: 100 })).entries.map((e) => e.position);
    const seen: number[] = [];
    let before: number | undefined;
    for (;;) {
      const result = await page({ limit: 2, ...(before === undefined ? {} : { before }) });
      expect(result.entries.length).toBeLessThanOrEqual(2);
      seen.push(...result.entries.map((e) => e.position));
      if (result.nextBefore === null) break;
      before = result.nextBefore;
    }
    expect(seen).toEqual(all);
    expect((await page({ before: 1 })).entries).toEqual([]);
  });

  it("defaults to 50 entries and says which filters applied", async () => {
    const response = await ok<{ result: { filters: unknown } }>(api.query("timeline.read", {}));
    expect(response.result.filters).toEqual({ actor: null, repo: null, before: null, limit: 50 });
  });

  it("an unknown repository filter is a 404", async () => {
    const response = await api.query("timeline.read", { repo: "no-such-repo" });
    expect(response.status).toBe(404);
    expect((await json(response)).error.code).toBe("repository_not_found");
  });
});

describe("repository.read", () => {
  it("the project repository: HEAD, branch, its worktrees, and a snapshot of HEAD's files", async () => {
    const { result } = await ok<{ result: Json }>(api.query("repository.read", { id: projectId }));
    expect(result).toMatchObject({
      id: projectId,
      kind: "project",
      vcs: "git",
      path: root,
      head: git(root, "rev-parse", "HEAD"),
      branch: "main",
    });
    expect(result.worktrees).toEqual([
      expect.objectContaining({ id: realTask, changeNumber: 1, exists: true, changeStatus: "ready" }),
    ]);
    expect(result.snapshot.of).toBe("HEAD");
    expect(result.snapshot.files.map((f: { path: string }) => f.path).sort()).toEqual([
      ".gitignore",
      "README.md",
      "src/greet.js",
    ]);
    expect(result.snapshot.files.find((f: { path: string }) => f.path === "README.md")).toMatchObject({
      size: 11,
      type: "blob",
    });
  });

  it("a task's worktree: its branch and a snapshot of what is in it now (the agent's file included)", async () => {
    const { result } = await ok<{ result: Json }>(api.query("repository.read", { id: realTask }));
    expect(result).toMatchObject({
      id: realTask,
      kind: "worktree",
      project: projectId,
      exists: true,
      changeNumber: 1,
    });
    expect(result.snapshot.of).toBe("worktree");
    expect(result.snapshot.files.map((f: { path: string }) => f.path)).toContain("hello.txt");
  });

  it("a missing repository is a 404 naming the project's id", async () => {
    const response = await api.query("repository.read", { id: "t_alpha001" });
    expect(response.status).toBe(404);
    const body = await json(response);
    expect(body.error.code).toBe("repository_not_found");
    expect(body.error.detail).toContain(projectId);
  });
});

describe("change.read", () => {
  it("a change: status, report, findings and the diff verified by git", async () => {
    const { result } = await ok<{ result: Json }>(api.query("change.read", { number: 1 }));
    expect(result).toMatchObject({
      number: 1,
      taskId: realTask,
      status: "ready",
      phase: "finished",
      outcome: "succeeded",
      agent: "reference",
    });
    expect(result.report).toMatchObject({ status: "success", changes_verified_by: "git" });
    expect(besidesSandbox(result.findings)).toEqual([]);
    expect(result.diff).toMatchObject({
      verifiedBy: "git",
      origin: "recorded",
      truncated: false,
      files: [{ path: "hello.txt", action: "added" }],
    });
    expect(result.diff.patch).toContain("+hi");
    expect(result.diffUnavailable).toBeNull();
  });

  it("a change caesar has no record of is shown, and says why no diff is computed for it", async () => {
    const { result } = await ok<{ result: Json }>(api.query("change.read", { number: 102 }));
    expect(result.status).toBe("applied");
    expect(result.diff).toBeNull();
    expect(result.diffUnavailable).toMatch(/caesar has no record of this task/);
  });

  it("a missing change is a 404", async () => {
    const response = await api.query("change.read", { number: 9999 });
    expect(response.status).toBe(404);
    expect((await json(response)).error).toMatchObject({
      code: "change_not_found",
      summary: "No change #9999 in this workspace.",
    });
  });
});

describe("the response envelope", () => {
  it("echoes protocol, requestId, runId and revision, with provenance observed", async () => {
    const state = await api.state();
    const requestId = randomUUID();
    const response = await api.request("/api/agent/v1/query", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Commit-Zero": "local-demo" },
      body: JSON.stringify({
        protocol: "cz-agent/1",
        requestId,
        runId: state.runId,
        revision: state.version,
        operation: "change.read",
        arguments: { number: 101 },
      }),
    });
    const body = await ok<Record<string, unknown>>(response);
    expect(Object.keys(body)).toEqual([
      "protocol",
      "requestId",
      "runId",
      "revision",
      "provenance",
      "operation",
      "result",
    ]);
    expect(body).toMatchObject({
      protocol: "cz-agent/1",
      requestId,
      runId: state.runId,
      revision: state.version,
      provenance: "observed",
      operation: "change.read",
    });
  });
});

describe("revisions", () => {
  it("a stale revision or runId is a 409 naming the current ones; the version grows with every change", async () => {
    const before = await api.state();
    const staleRun = await api.query(
      "change.read",
      { number: 1 },
      { runId: randomUUID(), revision: before.version },
    );
    expect(staleRun.status).toBe(409);
    const staleRunBody = await json(staleRun);
    expect(staleRunBody).toMatchObject({
      protocol: "cz-agent/1",
      runId: before.runId,
      revision: before.version,
      error: { code: "stale_run" },
    });
    expect(staleRunBody.requestId).toMatch(/^[0-9a-f-]{36}$/);
    const future = await api.query(
      "change.read",
      { number: 1 },
      { runId: before.runId, revision: before.version + 1 },
    );
    expect(future.status).toBe(409);
    expect((await json(future)).error.code).toBe("stale_revision");

    appendEvents(
      join(root, ".caesar", "tasks", "t_alpha001"),
      "t_alpha001",
      [{ type: "progress", message: "later" }],
      50,
    );
    await api.ctx.index.refresh(["t_alpha001"]);
    const after = await api.state();
    expect(after.version).toBeGreaterThan(before.version);
    expect(after.runId).toBe(before.runId);
    const stale = await api.query(
      "change.read",
      { number: 1 },
      { runId: before.runId, revision: before.version },
    );
    expect(stale.status).toBe(409);
    const body = await json(stale);
    expect(body.error.code).toBe("stale_revision");
    expect(body.revision).toBe(after.version);
    expect(body.error.detail).toContain("/api/state");
    const newest = await page({ limit: 1 });
    expect(newest.entries[0]).toMatchObject({ taskId: "t_alpha001", type: "progress", ordinal: 4 });
  });
});

describe("bad requests", () => {
  const cases: [string, (basis: { runId: string; revision: number }) => unknown, string][] = [
    ["unknown operation", (b) => ({ ...envelope(b), operation: "timeline.write" }), "unknown_operation"],
    ["missing operation", (b) => omit(envelope(b), "operation"), "unknown_operation"],
    ["unknown top-level field", (b) => ({ ...envelope(b), extra: true }), "unknown_field"],
    [
      "unknown argument",
      (b) => ({ ...envelope(b), arguments: { limit: 5, colour: "red" } }),
      "unknown_field",
    ],
    ["limit 0", (b) => ({ ...envelope(b), arguments: { limit: 0 } }), "invalid_argument"],
    ["limit 101", (b) => ({ ...envelope(b), arguments: { limit: 101 } }), "invalid_argument"],
    ["limit 1.5", (b) => ({ ...envelope(b), arguments: { limit: 1.5 } }), "invalid_argument"],
    ["limit as text", (b) => ({ ...envelope(b), arguments: { limit: "10" } }), "invalid_argument"],
    ["empty actor", (b) => ({ ...envelope(b), arguments: { actor: "" } }), "invalid_argument"],
    ["before 0", (b) => ({ ...envelope(b), arguments: { before: 0 } }), "invalid_argument"],
    [
      "change number 0",
      (b) => ({ ...envelope(b), operation: "change.read", arguments: { number: 0 } }),
      "invalid_argument",
    ],
    [
      "change number -1",
      (b) => ({ ...envelope(b), operation: "change.read", arguments: { number: -1 } }),
      "invalid_argument",
    ],
    [
      "change number 1.5",
      (b) => ({ ...envelope(b), operation: "change.read", arguments: { number: 1.5 } }),
      "invalid_argument",
    ],
    [
      "change without number",
      (b) => ({ ...envelope(b), operation: "change.read", arguments: {} }),
      "invalid_argument",
    ],
    [
      "repository without id",
      (b) => ({ ...envelope(b), operation: "repository.read", arguments: {} }),
      "invalid_argument",
    ],
    ["arguments missing", (b) => omit(envelope(b), "arguments"), "invalid_argument"],
    ["arguments an array", (b) => ({ ...envelope(b), arguments: [] }), "invalid_argument"],
    ["requestId not a UUID", (b) => ({ ...envelope(b), requestId: "42" }), "invalid_envelope"],
    ["requestId missing", (b) => omit(envelope(b), "requestId"), "invalid_envelope"],
    ["runId not a UUID", (b) => ({ ...envelope(b), runId: "run" }), "invalid_envelope"],
    ["revision negative", (b) => ({ ...envelope(b), revision: -1 }), "invalid_envelope"],
    ["revision as text", (b) => ({ ...envelope(b), revision: "0" }), "invalid_envelope"],
    ["another protocol", (b) => ({ ...envelope(b), protocol: "cz-agent/2" }), "unsupported_protocol"],
    ["no protocol", (b) => omit(envelope(b), "protocol"), "unsupported_protocol"],
    ["an array", () => [], "invalid_envelope"],
    ["null", () => null, "invalid_envelope"],
    ["a number", () => 7, "invalid_envelope"],
  ];

  it.each(cases)("%s → 400 %s, with the issues listed", async (_name, make, code) => {
    const state = await api.state();
    const response = await postRaw(JSON.stringify(make({ runId: state.runId, revision: state.version })));
    expect(response.status).toBe(400);
    const body = await json(response);
    expect(body.error.code).toBe(code);
    expect(body.error.summary.length).toBeGreaterThan(0);
    expect(body.error.detail).toContain("/api/agent/v1/schema");
    expect(body.error.issues.length).toBeGreaterThan(0);
    expect(body.runId).toBe(state.runId);
  });

  it("validation comes before the revision check: a malformed stale request is a 400", async () => {
    const response = await postRaw(
      JSON.stringify({ ...envelope({ runId: randomUUID(), revision: 12345 }), extra: 1 }),
    );
    expect(response.status).toBe(400);
  });

  it("invalid JSON is a 400 invalid_json", async () => {
    const response = await postRaw('{"protocol": "cz-agent/1",');
    expect(response.status).toBe(400);
    expect((await json(response)).error.code).toBe("invalid_json");
  });

  it("invalid UTF-8 is a 400 invalid_json", async () => {
    const response = await api.request("/api/agent/v1/query", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Commit-Zero": "local-demo" },
      body: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]),
    });
    expect(response.status).toBe(400);
    expect((await json(response)).error.code).toBe("invalid_json");
  });

  it("POST without the operator header is a 403", async () => {
    const state = await api.state();
    const response = await api.request("/api/agent/v1/query", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(envelope({ runId: state.runId, revision: state.version })),
    });
    expect(response.status).toBe(403);
    expect((await json(response)).error).toMatchObject({
      code: "operator_header_required",
      summary: expect.stringContaining("X-Commit-Zero: local-demo"),
    });
  });

  it("a body that is not JSON by its Content-Type is a 415, a huge one a 413", async () => {
    const text = await api.request("/api/agent/v1/query", {
      method: "POST",
      headers: { "Content-Type": "text/plain", "X-Commit-Zero": "local-demo" },
      body: "{}",
    });
    expect(text.status).toBe(415);
    expect((await json(text)).error.code).toBe("unsupported_media_type");
    const huge = await postRaw(JSON.stringify({ padding: "x".repeat(300 * 1024) }));
    expect(huge.status).toBe(413);
    expect((await json(huge)).error.code).toBe("body_too_large");
  });

  it("a streamed body without Content-Length is cut off at the limit (413)", async () => {
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        sent += 1;
        if (sent > 1000) controller.close();
        else controller.enqueue(new TextEncoder().encode(`{"padding":"${"x".repeat(1000)}"},`));
      },
    });
    const response = await api.request("/api/agent/v1/query", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Commit-Zero": "local-demo" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(sent).toBeLessThan(1000);
  });

  it("a Host that is not the server's local address is refused (DNS rebinding)", async () => {
    const response = await api.request("/api/state", { headers: { host: "attacker.example:4999" } });
    expect(response.status).toBe(403);
    expect((await json(response)).error.code).toBe("host_not_allowed");
    expect((await api.request("/api/state", { headers: { host: "localhost:4999" } })).status).toBe(200);
    expect((await api.request("/api/state", { headers: { host: "127.0.0.1:1234" } })).status).toBe(403);
  });

  it("every response carries the security headers; no CORS is ever granted", async () => {
    const response = await api.request("/api/state", { headers: { Origin: "http://attacker.example" } });
    expect(response.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
    const preflight = await api.request("/api/agent/v1/query", {
      method: "OPTIONS",
      headers: { Origin: "http://attacker.example", "Access-Control-Request-Method": "POST" },
    });
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
    expect(preflight.headers.get("access-control-allow-headers")).toBeNull();
  });
});

function envelope(basis: { runId: string; revision: number }) {
  return {
    protocol: "cz-agent/1",
    requestId: randomUUID(),
    runId: basis.runId,
    revision: basis.revision,
    operation: "timeline.read",
    arguments: { limit: 5 },
  };
}

function omit(value: Record<string, unknown>, key: string) {
  const { [key]: _, ...rest } = value;
  return rest;
}

function postRaw(body: string) {
  return api.request("/api/agent/v1/query", {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Commit-Zero": "local-demo" },
    body,
  });
}
