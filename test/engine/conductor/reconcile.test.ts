import { describe, expect, it } from "vitest";
import { reconcile } from "../../../src/engine/conductor/reconcile.js";
import { parseDocument } from "../../../src/protocol/documents.js";

const report = (extra: Record<string, unknown> = {}) =>
  parseDocument("report", { protocol: "caesar.report/v1", status: "success", summary: "s", ...extra });

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
