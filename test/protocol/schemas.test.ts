import { readFileSync } from "node:fs";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { DocumentError, parseDocument, safeParseDocument } from "../../src/protocol/documents.js";
import { EVENT_TYPES } from "../../src/protocol/event.js";
import { jsonSchemaFor } from "../../src/protocol/json-schema.js";
import type { DocumentKind } from "../../src/protocol/versions.js";

const seed = (name: string) => readFileSync(new URL(`../fixtures/seeds/${name}`, import.meta.url), "utf8");
const seedJson = (name: string) => JSON.parse(seed(name)) as Record<string, unknown>;
// The seed elides each event's `at` ("…"); a writer puts an ISO-8601 timestamp there, as the schema says.
const seedEvents = () =>
  seed("events.jsonl")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .map((event) => ({ ...event, at: event.at === "…" ? "2026-08-09T10:00:01.000Z" : event.at }));

function ajvFor(kind: DocumentKind, strict = false) {
  const ajv = new Ajv2020.default({ strict: false, allErrors: true });
  addFormats.default(ajv);
  return ajv.compile(jsonSchemaFor(kind, { strict }));
}

describe("the seed's JSON examples", () => {
  it("parse with the zod schemas", () => {
    expect(parseDocument("task", seedJson("task.json")).objective).toBe(
      "Fix the parser regression on empty inputs",
    );
    expect(parseDocument("report", seedJson("report.json")).changes[0]?.path).toBe("src/parser.ts");
    expect(parseDocument("report", seedJson("minimal-report.json")).status).toBe("success");
    for (const event of seedEvents()) expect(safeParseDocument("event", event).ok).toBe(true);
  });

  it("are accepted by the generated JSON Schemas", () => {
    const cases: [DocumentKind, unknown][] = [
      ["task", seedJson("task.json")],
      ["report", seedJson("report.json")],
      ["report", seedJson("minimal-report.json")],
      ...seedEvents().map((event): [DocumentKind, unknown] => ["event", event]),
    ];
    for (const [kind, document] of cases) {
      const validate = ajvFor(kind);
      expect(validate(document), JSON.stringify(validate.errors)).toBe(true);
    }
  });
});

describe("caesar.event/v1 members", () => {
  const event = (body: Record<string, unknown>) => ({
    protocol: "caesar.event/v1",
    seq: 0,
    at: "2030-01-01T00:00:00.000Z",
    task_id: "t_1",
    ...body,
  });
  const problems = (body: Record<string, unknown>) => {
    const result = safeParseDocument("event", event(body));
    return result.ok ? [] : result.problems.map((p) => `${p.path}: ${p.message}`);
  };

  it("validates finished.status, file_changed.action and at as the seed defines them", () => {
    expect(problems({ type: "finished", status: "success", outcome: "succeeded" })).toEqual([]);
    expect(problems({ type: "finished", status: "done" })).toEqual([
      expect.stringContaining('$.status: expected one of "success", "partial", "failed", "blocked"'),
    ]);
    expect(problems({ type: "finished", status: "failed", outcome: "exploded" })).toEqual([
      expect.stringMatching(/^\$\.outcome: expected one of "succeeded"/),
    ]);
    expect(problems({ type: "file_changed", path: "a.ts", action: "modified" })).toEqual([]);
    expect(problems({ type: "file_changed", path: "a.ts" })).toEqual([]);
    expect(problems({ type: "file_changed", path: "a.ts", action: "written" })).toEqual([
      expect.stringContaining('$.action: expected one of "added", "modified", "deleted", "renamed"'),
    ]);
    expect(problems({ type: "progress", message: "m", at: "yesterday" })).toEqual([
      expect.stringMatching(/^\$\.at: /),
    ]);
    expect(problems({ type: "progress", message: "m", at: "2030-01-01T01:00:00+01:00" })).toEqual([]);
  });
});

describe("caesar.report/v1", () => {
  it("accepts the minimal report and fills every default", () => {
    const report = parseDocument("report", { protocol: "caesar.report/v1", status: "success", summary: "…" });
    expect(report).toEqual({
      protocol: "caesar.report/v1",
      status: "success",
      summary: "…",
      details: "",
      changes: [],
      commands_run: [],
      findings: [],
      questions: [],
      next_steps: [],
      artifacts: [],
      usage: {},
    });
  });

  it("refuses caesar.report/v2, naming both versions", () => {
    const attempt = () =>
      parseDocument("report", { protocol: "caesar.report/v2", status: "success", summary: "x" });
    expect(attempt).toThrow(DocumentError);
    expect(attempt).toThrow(/caesar\.report\/v2.*caesar\.report\/v1/);
    const result = safeParseDocument("report", {
      protocol: "caesar.report/v2",
      status: "success",
      summary: "x",
    });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.unsupported).toBe(true);
      expect(result.problems[0]?.message).toContain("caesar.report/v2");
      expect(result.problems[0]?.message).toContain("caesar.report/v1");
    }
  });

  it("refuses an unknown protocol explicitly instead of reading it", () => {
    const result = safeParseDocument("report", {
      protocol: "acme.report/v1",
      status: "success",
      summary: "x",
    });
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.problems[0]?.message).toMatch(/found "acme\.report\/v1", expected "caesar\.report\/v1"/);
  });

  it("reports every problem with its JSON path", () => {
    const result = safeParseDocument("report", {
      protocol: "caesar.report/v1",
      status: "done",
      summary: "",
      findings: [{ severity: "urgent", title: "x" }],
    });
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.problems.map((p) => p.path).sort()).toEqual([
        "$.findings[0].severity",
        "$.status",
        "$.summary",
      ]);
    }
  });

  it("reads common spellings of change actions", () => {
    const report = parseDocument("report", {
      protocol: "caesar.report/v1",
      status: "success",
      summary: "x",
      changes: [{ path: "a", action: "created" }],
    });
    expect(report.changes[0]?.action).toBe("added");
  });
});

describe("caesar.event/v1", () => {
  it("knows the ten event types", () => {
    expect(EVENT_TYPES.sort()).toEqual(
      [
        "answer",
        "error",
        "file_changed",
        "finished",
        "message",
        "progress",
        "question",
        "started",
        "thinking",
        "tool_use",
      ].sort(),
    );
  });

  it("defaults a tool_use id to empty, so journals written before it existed still read", () => {
    const event = parseDocument("event", {
      protocol: "caesar.event/v1",
      seq: 1,
      at: "2026-01-01T00:00:00Z",
      task_id: "t_1",
      type: "tool_use",
      tool: "bash",
      status: "started",
    });
    expect(event.type === "tool_use" && event.id).toBe("");
  });

  it("refuses an unknown event type", () => {
    const result = safeParseDocument("event", {
      protocol: "caesar.event/v1",
      seq: 1,
      at: "x",
      task_id: "t",
      type: "teleported",
    });
    expect(result.ok).toBe(false);
  });
});

describe("caesar.task/v1", () => {
  it("defaults network to true when absent, so an older task.json reads unchanged", () => {
    const { network: _, ...older } = seedJson("task.json");
    expect(parseDocument("task", older).network).toBe(true);
  });
});

describe("null read as absent", () => {
  it("accepts null for an optional member at any depth, in every document", () => {
    const report = safeParseDocument("report", {
      protocol: "caesar.report/v1",
      status: "success",
      summary: "done",
      usage: null,
      task_id: null,
      findings: [{ severity: "low", title: "t", file: null, line: null }],
    });
    expect(report).toMatchObject({ ok: true, value: { usage: {}, findings: [{ title: "t" }] } });
    const event = safeParseDocument("event", {
      protocol: "caesar.event/v1",
      seq: 0,
      at: "2030-01-01T00:00:00.000Z",
      task_id: "t_1",
      type: "tool_use",
      tool: "bash",
      status: "succeeded",
      input_summary: null,
      exit_code: null,
    });
    expect(event).toMatchObject({ ok: true, value: { exit_code: null } });
    expect(event.ok && "input_summary" in event.value).toBe(false);
  });

  it("keeps a null in a required member an error, named as the null it is", () => {
    const result = safeParseDocument("report", {
      protocol: "caesar.report/v1",
      status: null,
      summary: "x",
      usage: null,
    });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      expect.stringMatching(/^\$\.status: .*/),
    ]);
  });
});

describe("strict JSON Schemas for native structured output", () => {
  it("require every property and forbid additional ones, at every level", () => {
    const schema = jsonSchemaFor("report", { strict: true }) as {
      properties: Record<string, { items?: { required: string[]; additionalProperties: boolean } }>;
      required: string[];
      additionalProperties: boolean;
    };
    expect(schema.required.sort()).toEqual(Object.keys(schema.properties).sort());
    expect(schema.additionalProperties).toBe(false);
    const finding = schema.properties.findings?.items;
    expect(finding?.required).toContain("line");
    expect(finding?.additionalProperties).toBe(false);
    expect(JSON.stringify(schema)).not.toContain('"default"');
  });

  it("accept a strict answer (nulls for absent members) that then reads as a valid report", () => {
    const strictAnswer = {
      protocol: "caesar.report/v1",
      task_id: null,
      status: "partial",
      summary: "Half done",
      details: null,
      changes: [{ path: "a.txt", action: "added", from: null, summary: null }],
      commands_run: [],
      findings: [{ severity: "low", title: "t", file: null, line: null, detail: null }],
      questions: [],
      next_steps: ["finish"],
      artifacts: [],
      usage: { input_tokens: 1, output_tokens: 2, duration_ms: null, cost_usd: null },
    };
    const validate = ajvFor("report", true);
    expect(validate(strictAnswer), JSON.stringify(validate.errors)).toBe(true);
    const minimal = { protocol: "caesar.report/v1", status: "success", summary: "x" };
    expect(validate(minimal)).toBe(false);
    const read = parseDocument("report", strictAnswer);
    expect(read.changes[0]?.summary).toBeUndefined();
    expect(read.details).toBe("");
    expect(read.usage).toEqual({ input_tokens: 1, output_tokens: 2 });
  });

  it("exist for every kind and compile", () => {
    for (const kind of ["task", "report", "event", "question", "answer"] as const) {
      expect(() => ajvFor(kind, true)).not.toThrow();
      expect(() => ajvFor(kind)).not.toThrow();
    }
  });
});
