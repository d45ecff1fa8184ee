import { describe, expect, it } from "vitest";
import {
  balancedObjectAt,
  findFencedReport,
  findSelfDeclaredReport,
} from "../../../src/engine/conductor/report-scan.js";

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
