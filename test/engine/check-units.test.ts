import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  CHECK_LOG_HEAD_BYTES,
  CHECK_LOG_TAIL_BYTES,
  CheckOutput,
} from "../../src/engine/conductor/check-output.js";
import { applyChecks } from "../../src/engine/conductor/check-verdict.js";
import { checkEnvironment } from "../../src/engine/conductor/checks.js";
import {
  FOLLOW_UP_DIFF_BYTES,
  makeFollowUpPrompt,
  makeFreshBrief,
} from "../../src/engine/conductor/follow-up.js";
import { firstProgram } from "../../src/engine/lifecycle/check-plan.js";
import { textCriteria } from "../../src/engine/store/task-plan.js";
import type { CheckResult } from "../../src/protocol/checks.js";
import type { NormalizedReport } from "../../src/protocol/report.js";
import { tempDir } from "../helpers/repo.js";

describe("the first program of a check", () => {
  it.each([
    ["npm test", "npm"],
    ["  CI=1 FOO='a b' npx vitest run", "npx"],
    ["'./my script.sh' --flag", "./my script.sh"],
    ['"$HOME/bin/x"', undefined],
    ["cd sub && make", "cd"],
    ["(make test)", undefined],
    ["make|tee log", "make"],
    ["*.sh", undefined],
    ["a\\ b c", "a b"],
    ["'unterminated", undefined],
  ])("%j → %j", (command, program) => {
    expect(firstProgram(command)).toBe(program);
  });

  it("`run:` criteria are checks, the rest stay text", () => {
    expect(textCriteria(["run: npm test", "RUN:make", "npm test passes", "the run: is later"])).toEqual([
      "npm test passes",
      "the run: is later",
    ]);
  });
});

describe("a check's output", () => {
  it("keeps its head and its tail, says how much it left out, and quotes the end", () => {
    const path = join(tempDir(), "check.log");
    const output = new CheckOutput(path);
    const chunk = `${"y".repeat(1023)}\n`;
    for (let i = 0; i < 3 * 1024; i++) output.write(chunk); // 3 MiB
    output.write("the very end\n");
    const tail = output.close();
    expect(output.bytes).toBe(3 * 1024 * 1024 + 13);
    expect(tail.endsWith("the very end\n")).toBe(true);
    expect(tail.length).toBeLessThanOrEqual(4000);
    const size = statSync(path).size;
    expect(size).toBeLessThan(CHECK_LOG_HEAD_BYTES + CHECK_LOG_TAIL_BYTES + 100);
    const text = readFileSync(path, "utf8");
    const omitted = 3 * 1024 * 1024 + 13 - CHECK_LOG_HEAD_BYTES - CHECK_LOG_TAIL_BYTES;
    expect(text).toContain(`[caesar: ${omitted} bytes of output not kept]`);
    expect(text.endsWith("the very end\n")).toBe(true);
  });

  it("a short output is kept whole, and a cut multi-byte character is not quoted half", () => {
    const path = join(tempDir(), "check.log");
    const output = new CheckOutput(path);
    output.write(Buffer.from("é".repeat(5000)));
    const tail = output.close();
    expect(readFileSync(path, "utf8")).toBe("é".repeat(5000));
    expect(tail).toMatch(/^é+$/);
  });
});

describe("the verdict in the report", () => {
  const report = {
    protocol: "caesar.report/v1",
    task_id: "t_1",
    status: "success",
    summary: "all good",
    details: "",
    changes: [],
    commands_run: [],
    findings: [],
    questions: [],
    next_steps: [],
    artifacts: [],
    usage: {},
    changes_verified_by: "git",
    report_source: "file",
    checks: [],
    attempts: [],
  } satisfies NormalizedReport;
  const passed: CheckResult = {
    command: "true",
    exit_code: 0,
    duration_ms: 5,
    passed: true,
    output_tail: "",
  };
  const failed: CheckResult = {
    command: "npm test",
    exit_code: 1,
    duration_ms: 2100,
    passed: false,
    output_tail: "1 failing\nexpected 2 to be 3\n",
    log: "checks/1-1.log",
  };

  it("a failing check turns success into partial, with a high finding quoting its tail", () => {
    const out = applyChecks(report, [passed, failed], []);
    expect(out.status).toBe("partial");
    const high = out.findings.filter((finding) => finding.severity === "high");
    expect(high).toEqual([
      {
        severity: "high",
        title: "Check failed: `npm test` (exit code 1 after 2.1s)",
        detail:
          "The end of its output (all of it: checks/1-1.log in the task directory):\n1 failing\nexpected 2 to be 3",
      },
    ]);
  });

  it("every check passing leaves the status alone; a failed or blocked report stays what it is", () => {
    expect(applyChecks(report, [passed], []).status).toBe("success");
    expect(applyChecks({ ...report, status: "blocked" }, [failed], []).status).toBe("blocked");
    expect(applyChecks({ ...report, status: "failed" }, [failed], []).findings).toHaveLength(1);
  });
});

describe("follow-ups", () => {
  const checks: CheckResult[] = [
    { command: "npm test", exit_code: 1, duration_ms: 1000, passed: false, output_tail: "boom" },
    { command: "true", exit_code: 0, duration_ms: 1, passed: true, output_tail: "" },
  ];
  const input = { attempt: 2, attempts: 3, checks, workspace: "/w", reportPath: "/t/report.json" };

  it("a continued session hears only what is new: the failing checks and what to do", () => {
    const prompt = makeFollowUpPrompt(input);
    expect(prompt).toContain("1 of 2 failed. This is attempt 2 of 3.");
    expect(prompt).toContain("Check `npm test` failed: exit code 1 after 1.0s.");
    expect(prompt).toContain("boom");
    expect(prompt).not.toContain("`true`");
    expect(prompt).toContain("/t/report.json");
  });

  it("a new run gets the brief, the failures and the diff so far, bounded", () => {
    const diff = `diff --git a/x b/x\n${"+line\n".repeat(20_000)}`;
    const brief = makeFreshBrief({ ...input, brief: "Objective: fix it", diff });
    expect(brief.startsWith("Objective: fix it")).toBe(true);
    expect(brief).toContain("This is attempt 2 of 3 on this task.");
    expect(brief).toContain(`first ${FOLLOW_UP_DIFF_BYTES} bytes`);
    expect(Buffer.byteLength(brief)).toBeLessThan(FOLLOW_UP_DIFF_BYTES + 2000);
    expect(makeFreshBrief({ ...input, brief: "b", diff: "" })).toContain("left no change");
  });
});

describe("a check's environment", () => {
  it("drops the providers' credentials and every CAESAR_* variable, keeps the rest", () => {
    const env = checkEnvironment({
      PATH: "/bin",
      HOME: "/h",
      ANTHROPIC_API_KEY: "k",
      OPENAI_BASE_URL: "u",
      GITHUB_TOKEN: "t",
      DB_PASSWORD: "p",
      CAESAR_TASK_ID: "t_1",
      CAESAR_REPORT_PATH: "/r",
      AGENT_CHAT_ROOT: "/c",
      LANG: "C.UTF-8",
    });
    expect(env).toEqual({ PATH: "/bin", HOME: "/h", LANG: "C.UTF-8" });
  });
});
