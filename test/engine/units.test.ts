import { describe, expect, it } from "vitest";
import type { AgentCapabilities } from "../../src/agents/adapter.js";
import { reconcile } from "../../src/engine/conductor/reconcile.js";
import {
  balancedObjectAt,
  findFencedReport,
  findSelfDeclaredReport,
} from "../../src/engine/conductor/report-scan.js";
import { resolveNetwork } from "../../src/policy/network.js";
import { parseDocument } from "../../src/protocol/documents.js";
import { formatDuration, parseDuration } from "../../src/support/duration.js";

const report = (extra: Record<string, unknown> = {}) =>
  parseDocument("report", { protocol: "caesar.report/v1", status: "success", summary: "s", ...extra });

describe("durations", () => {
  it("parse units and refuse bare numbers", () => {
    expect(parseDuration("1h30m")).toBe(5_400_000);
    expect(parseDuration("1500ms")).toBe(1500);
    expect(parseDuration("0.5s")).toBe(500);
    expect(() => parseDuration("600")).toThrow(/Invalid duration/);
    expect(() => parseDuration("10 minutes")).toThrow(/Invalid duration/);
    expect(formatDuration(61_000)).toBe("1m01s");
  });
});

describe("the degraded tier", () => {
  it("finds the last valid fenced caesar:report block", () => {
    const text =
      'x\n```json caesar:report\n{"protocol":"caesar.report/v1","status":"failed","summary":"a"}\n```\nthen\n```json caesar:report\n{"protocol":"caesar.report/v1","status":"success","summary":"b"}\n```\n';
    expect(findFencedReport(text).report?.summary).toBe("b");
  });

  it("finds a self-declared report among other JSON, respecting strings with braces", () => {
    const text =
      'log {"a":1} more {"protocol":"caesar.report/v1","status":"partial","summary":"has } and { in it","next_steps":["x"]} tail';
    expect(findSelfDeclaredReport(text).report?.summary).toBe("has } and { in it");
    expect(balancedObjectAt('{"a":"}"}', 0)).toBe('{"a":"}"}');
    const invalid = findSelfDeclaredReport('{"protocol":"caesar.report/v1","status":"nope","summary":"x"}');
    expect(invalid.report).toBeUndefined();
    expect(invalid.rejected).toEqual([
      { text: expect.any(String), problems: [expect.stringContaining("$.status")] },
    ]);
  });
});

describe("reconciliation", () => {
  const base = { taskId: "t_1", source: "file" as const, workspace: "/w", linked: [], findings: [] };

  it("keeps the agent's summaries for the changes git confirms", () => {
    const normalized = reconcile({
      ...base,
      mode: "write",
      report: report({ changes: [{ path: "./a.ts", action: "modified", summary: "fixed" }] }),
      observed: [{ path: "a.ts", action: "modified" }],
    });
    expect(normalized.changes).toEqual([{ path: "a.ts", action: "modified", summary: "fixed" }]);
    expect(normalized.findings).toEqual([]);
    expect(normalized.changes_verified_by).toBe("git");
  });

  it("reads a rename declared whole or as its two halves as agreeing with git", () => {
    const observed = [{ path: "new.ts", action: "renamed" as const, from: "old.ts" }];
    for (const changes of [
      [{ path: "new.ts", action: "renamed" }],
      [
        { path: "old.ts", action: "deleted" },
        { path: "new.ts", action: "added" },
      ],
    ]) {
      const normalized = reconcile({ ...base, mode: "write", report: report({ changes }), observed });
      expect(normalized.changes).toEqual([{ path: "new.ts", action: "renamed", from: "old.ts" }]);
      expect(normalized.findings).toEqual([]);
    }
  });

  it("flags each declared action git contradicts, saying what git saw", () => {
    const normalized = reconcile({
      ...base,
      mode: "write",
      report: report({
        changes: [
          { path: "a.ts", action: "deleted" },
          { path: "b.ts", action: "modified" },
          { path: "old.ts", action: "modified" },
        ],
      }),
      observed: [
        { path: "a.ts", action: "modified" },
        { path: "b.ts", action: "added" },
        { path: "new.ts", action: "renamed", from: "old.ts" },
      ],
    });
    expect(normalized.findings).toEqual([
      {
        severity: "medium",
        title: "3 declared change(s) contradicted by git",
        detail: [
          "a.ts: declared deleted, git saw it modified",
          "b.ts: declared modified, git saw it added",
          "old.ts: declared modified, git saw it renamed to new.ts",
        ].join("\n"),
      },
    ]);
  });

  it("outside git the declaration stands, and is labelled as such", () => {
    const normalized = reconcile({
      ...base,
      mode: "write",
      report: report({ changes: [{ path: "a", action: "added" }] }),
      observed: undefined,
    });
    expect(normalized.changes_verified_by).toBe("declaration");
    expect(normalized.changes).toHaveLength(1);
  });
});

describe("network is a result", () => {
  const caps = (value: AgentCapabilities["network"]["value"]) =>
    ({ network: { value, why: "because" } }) as AgentCapabilities;

  it("refuses on for an agent that cannot have it, with the reason and the remedy", () => {
    expect(() => resolveNetwork("codex", "on", "read-only", caps("write-only"))).toThrow(
      expect.objectContaining({
        code: "network_unavailable",
        detail: expect.stringContaining("--mode write"),
      }),
    );
  });

  it("runs off with a finding when the agent cannot be confined; false only when caesar knows", () => {
    expect(resolveNetwork("a", "off", "write", caps("open"))).toMatchObject({
      network: true,
      findings: [{ title: "Network could not be cut" }],
    });
    expect(resolveNetwork("a", "off", "write", caps("toggle"))).toEqual({ network: false, findings: [] });
    expect(resolveNetwork("a", "auto", "read-only", caps("write-only")).network).toBe(false);
    expect(resolveNetwork("a", "auto", "write", caps("open")).network).toBe(true);
  });
});
