import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";

const scratch = mkdtempSync(join(tmpdir(), "caesar-protocol-"));
function file(name: string, content: string): string {
  const path = join(scratch, name);
  writeFileSync(path, content);
  return path;
}

describe("caesar protocol schema", () => {
  it("prints a draft 2020-12 JSON Schema that a validator accepts", async () => {
    const result = await runCaesar(["protocol", "schema", "task"]);
    expect(result.code).toBe(0);
    const schema = JSON.parse(result.stdout);
    expect(schema.$schema).toBe("https://json-schema.org/draft/2020-12/schema");
    const ajv = new Ajv2020.default({ strict: false });
    expect(() => ajv.compile(schema)).not.toThrow();
  });

  it("--strict requires every property", async () => {
    const result = await runCaesar(["protocol", "schema", "report", "--strict"]);
    const schema = JSON.parse(result.stdout);
    expect(schema.required).toContain("usage");
    expect(schema.additionalProperties).toBe(false);
  });

  it("refuses an unknown kind as a usage error", async () => {
    const result = await runCaesar(["protocol", "schema", "nope", "--json"]);
    expect(result.code).toBe(2);
    const body = parseJsonOutput<{ error: { code: string; summary: string } }>(result);
    expect(body.error.code).toBe("invalid_argument");
    expect(body.error.summary).toContain("task, report, event, question, answer");
  });
});

describe("caesar protocol validate", () => {
  it("reports all three errors of a report with their locations, exit 1", async () => {
    const path = file(
      "bad-report.json",
      JSON.stringify({
        protocol: "caesar.report/v1",
        status: "finished",
        summary: "ok",
        changes: [{ path: "a.ts", action: "exploded" }],
        findings: [{ severity: "high" }],
      }),
    );
    const result = await runCaesar(["protocol", "validate", path]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("3 problems");
    expect(result.stdout).toContain("$.status");
    expect(result.stdout).toContain("$.changes[0].action");
    expect(result.stdout).toContain("$.findings[0].title");
  });

  it("gives line numbers for an events.jsonl, and tolerates a half-written last line", async () => {
    const path = file(
      "events.jsonl",
      [
        '{"protocol":"caesar.event/v1","seq":0,"at":"2026-01-01T00:00:00Z","task_id":"t","type":"started","agent":"x"}',
        "this is not json",
        '{"protocol":"caesar.event/v1","seq":2,"at":"2026-01-01T00:00:00Z","task_id":"t","type":"tool_use","tool":"bash"}',
        '{"protocol":"caesar.event/v1","seq":3,"at":"2026-01-01T00:00:00Z","task_id":"t","type":"progress","message":"ha',
      ].join("\n"),
    );
    const result = await runCaesar(["protocol", "validate", path, "--json"]);
    expect(result.code).toBe(1);
    const body = parseJsonOutput<{
      kind: string;
      problems: { line: number; path: string }[];
      warnings: { line: number }[];
    }>(result);
    expect(body.kind).toBe("events");
    expect(body.problems.map((p) => [p.line, p.path])).toEqual([
      [2, "$"],
      [3, "$.status"],
    ]);
    expect(body.warnings[0]?.line).toBe(4);
  });

  it("reads null as absent, as `protocol schema report --strict` tells agents to send it", async () => {
    const path = file(
      "strict-report.json",
      JSON.stringify({
        protocol: "caesar.report/v1",
        task_id: null,
        status: "success",
        summary: "ok",
        details: null,
        usage: null,
        changes: [{ path: "a.ts", action: "modified", summary: null }],
      }),
    );
    const result = await runCaesar(["protocol", "validate", path]);
    expect(result.stdout).toContain("valid report");
    expect(result.code).toBe(0);
  });

  it("accepts the seed's task, exit 0", async () => {
    const path = new URL("../fixtures/seeds/task.json", import.meta.url).pathname;
    const result = await runCaesar(["protocol", "validate", path]);
    expect(result.stdout).toContain("valid task");
    expect(result.code).toBe(0);
  });

  it("refuses a future version by name", async () => {
    const path = file(
      "v2.json",
      JSON.stringify({ protocol: "caesar.report/v2", status: "success", summary: "x" }),
    );
    const result = await runCaesar(["protocol", "validate", path]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      'unsupported protocol version "caesar.report/v2": this caesar reads caesar.report/v1',
    );
  });

  it("says clearly when the file does not exist", async () => {
    const result = await runCaesar(["protocol", "validate", join(scratch, "missing.json")]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^caesar: Cannot read .*missing\.json\./);
    expect(result.stderr).not.toMatch(/at .*\.js:\d+/);
  });
});

describe("caesar --help", () => {
  it("groups commands by use and documents exit codes", async () => {
    const result = await runCaesar(["--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Integrating:");
    expect(result.stdout).toContain("Exit codes:");
  });

  it("an unknown command is a usage error (exit 2), in JSON too", async () => {
    const result = await runCaesar(["frobnicate", "--json"]);
    expect(result.code).toBe(2);
    expect(parseJsonOutput<{ error: { code: string } }>(result).error.code).toBe("unknown_command");
  });
});
