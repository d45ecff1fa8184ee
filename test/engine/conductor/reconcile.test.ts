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
