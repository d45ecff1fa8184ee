import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { describeEnding } from "../../../src/engine/conductor/ending.js";
import { type RecoveryInput, recoverReport } from "../../../src/engine/conductor/recover.js";
import { tempDir } from "../../helpers/repo.js";

function input(overrides: Partial<RecoveryInput> = {}): RecoveryInput {
  const taskDir = tempDir();
  return {
    taskDir,
    reportPath: join(taskDir, "report.json"),
    stream: {},
    outputText: "",
    ending: describeEnding(
      { kind: "exited", exit: { code: 0, signal: null } },
      { agent: "a", timeoutMs: 60_000, outputTail: "done" },
    ),
    changedFiles: 0,
    ...overrides,
  };
}

const fence = (json: string) => `\n\`\`\`json caesar:report\n${json}\n\`\`\`\n`;

describe("report recovery", () => {
  it("reads a report.json whose optional fields are null", async () => {
    const given = input();
    writeFileSync(
      given.reportPath,
      JSON.stringify({
        protocol: "caesar.report/v1",
        status: "success",
        summary: "ok",
        usage: null,
        details: null,
      }),
    );
    const recovered = await recoverReport(given);
    expect(recovered.source).toBe("file");
    expect(recovered.findings).toEqual([]);
  });

  it("says what each tier found invalid and where it went next, never that it found nothing", async () => {
    const given = input({
      outputText: [
        'log {"protocol":"caesar.report/v1","status":"great","summary":"self"} end',
        fence('{"protocol":"caesar.report/v1","status":"done"}'),
        fence("{not json"),
      ].join("\n"),
    });
    writeFileSync(given.reportPath, JSON.stringify({ protocol: "caesar.report/v1", status: "ok" }));
    const recovered = await recoverReport(given);
    expect(recovered.source).toBe("synthesized");
    const titles = recovered.findings.map((finding) => finding.title);
    expect(titles).toEqual([
      "report.json is not a valid caesar.report/v1 report; it was ignored and recovery moved on to fenced blocks in the output",
      "2 fenced ```json caesar:report blocks in the output are not a valid report; recovery moved on to self-declared reports",
      'A JSON object declaring "caesar.report/v1" in the output is not a valid report; the report was synthesised from raw.log and the diff',
      "No valid report from the agent: this one is synthesised from raw.log and the diff",
    ]);
    const fenced = recovered.findings[1]!.detail!;
    expect(fenced).toContain("The last one: {not json\n  not valid JSON");
    expect(fenced).toContain("$.status");
    expect(recovered.findings[2]!.detail).toContain('"status":"great"');
    const tiers = recovered.findings[3]!.detail!;
    expect(tiers).toContain("report.json: invalid (see the finding above)");
    expect(tiers).toContain("fenced caesar:report block: 2 found, none valid");
    expect(tiers).toContain("self-declared report: 1 found, none valid");
    expect(tiers).not.toMatch(/no fenced/i);
  });

  it("keeps an earlier valid fenced block, and says the later invalid one was skipped", async () => {
    const recovered = await recoverReport(
      input({
        outputText: [
          fence('{"protocol":"caesar.report/v1","status":"partial","summary":"earlier"}'),
          fence('{"protocol":"caesar.report/v1","status":"partial"}'),
        ].join("\n"),
      }),
    );
    expect(recovered.source).toBe("fenced");
    expect(recovered.report.summary).toBe("earlier");
    expect(recovered.findings.map((finding) => finding.title)).toEqual([
      "A fenced ```json caesar:report block in the output is not a valid report; an earlier valid block was used",
    ]);
  });

  it("does not report twice an invalid block met by both scans", async () => {
    const block = '{"protocol":"caesar.report/v1","status":"done","summary":"x"}';
    const recovered = await recoverReport(input({ outputText: `${fence(block)}\n${fence(block)}` }));
    expect(recovered.findings.filter((finding) => finding.title.includes("not a valid report"))).toHaveLength(
      1,
    );
  });
});
