import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BUILTIN_SCENARIOS, loadScenario, parseScenario } from "../../src/mock-model/scenario.js";
import { synthesize } from "../../src/mock-model/schema-value.js";
import { jsonSchemaFor } from "../../src/protocol/json-schema.js";
import { ReportSchema } from "../../src/protocol/report.js";
import { CaesarError } from "../../src/support/errors.js";

describe("scenarios", () => {
  it("reads YAML and JSON, a bare list of steps included", () => {
    const yaml = parseScenario(`
name: two-commands
steps:
  - shell: npm test
  - write: { path: notes.md, content: "hi\\n" }
  - text: "all done: {{last_result}}"
`);
    expect(yaml.steps).toHaveLength(3);
    expect(parseScenario('[{"fail": {"status": 503}}]').steps[0]).toEqual({ fail: { status: 503 } });
  });

  it("says where a scenario is wrong and what a step may be", () => {
    try {
      parseScenario("steps:\n  - shell: ''\n  - teleport: now\n", "bad.yaml");
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(CaesarError);
      const { code, summary, detail } = (error as CaesarError).toJSON();
      expect(code).toBe("invalid_scenario");
      expect(summary).toContain("bad.yaml");
      expect(detail).toMatch(/steps\.0|steps\.1/);
      expect(detail).toContain("shell, write, call, text, report, fail, hang");
    }
  });

  it("loads a built-in by name or a file by path, and refuses anything else by name", async () => {
    expect((await loadScenario("fail-401")).steps[0]).toMatchObject({ fail: { status: 401 } });
    const dir = mkdtempSync(join(tmpdir(), "caesar-scenario-"));
    writeFileSync(join(dir, "s.json"), JSON.stringify({ steps: [{ text: "hi" }] }));
    expect((await loadScenario(join(dir, "s.json"))).steps).toEqual([{ text: "hi" }]);
    await expect(loadScenario("no-such-scenario")).rejects.toThrow(
      /No built-in scenario or file named no-such-scenario/,
    );
  });

  it("every built-in scenario is valid", () => {
    for (const scenario of Object.values(BUILTIN_SCENARIOS)) {
      expect(() => parseScenario(JSON.stringify(scenario))).not.toThrow();
    }
  });
});

describe("values synthesised from JSON Schemas", () => {
  it("fills a strict report schema: the overlay where given, null for nullable members, valid after dropping nulls", () => {
    const schema = jsonSchemaFor("report", { strict: true });
    const value = synthesize(schema, {
      protocol: "caesar.report/v1",
      status: "partial",
      summary: "half",
    }) as Record<string, unknown>;
    expect(value).toMatchObject({
      protocol: "caesar.report/v1",
      status: "partial",
      summary: "half",
      details: null,
    });
    const withoutNulls = Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null));
    expect(ReportSchema.safeParse(withoutNulls).success).toBe(true);
  });

  it("follows $ref, picks enum members, honours minItems and keeps undeclared wanted members", () => {
    const schema = {
      $defs: {
        item: { type: "object", properties: { n: { type: "integer", minimum: 3 } }, required: ["n"] },
      },
      type: "object",
      properties: {
        kind: { enum: ["a", "b"] },
        items: { type: "array", items: { $ref: "#/$defs/item" }, minItems: 2 },
      },
      required: ["kind", "items"],
    };
    expect(synthesize(schema, { kind: "b", extra: true })).toEqual({
      kind: "b",
      items: [{ n: 3 }, { n: 3 }],
      extra: true,
    });
  });
});
