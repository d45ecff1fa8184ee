import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createdByCaesarRun, runCaesarLive } from "../helpers/caesar-run-live.js";
import { agentBinAvailable } from "../helpers/live-agent.js";
import { pinnedAgentCli, standInForMissing } from "../helpers/system-deps.js";

/**
 * Checks and a second attempt with the real agent CLIs, driven by `caesar mock-model`'s `fix-on-retry`
 * scenario: the first turn breaks the test and claims success; the checks fail; the follow-up (which says
 * "attempt 2 of") fixes it. codex continues its own session (`codex exec resume`); claude, asked for
 * `--follow-up fresh`, gets a new run whose brief carries the diff and the failing check.
 */

const TIMEOUT_MS = 240_000;
const FILES = { "test.sh": "grep -qx fixed value.txt\n", "value.txt": "fixed\n" };

interface Attempt {
  attempt: number;
  how: string;
  session: string | null;
  checks_passed: boolean | null;
  checks: { passed: boolean; exit_code: number | null }[];
}

afterEach(() => {
  if (process.env.CAESAR_KEEP_LIVE === "1") return;
  for (const dir of createdByCaesarRun()) rmSync(dir, { recursive: true, force: true });
});

describe.each([
  ["codex", "resume", "resumed"],
  ["claude", "fresh", "fresh"],
])("live %s: checks fail, then a follow-up (%s) fixes it", (cli, followUp, how) => {
  if (!agentBinAvailable(cli)) {
    standInForMissing(pinnedAgentCli(cli));
    return;
  }
  it(
    `the first attempt breaks the test, the checks say so, the ${how} attempt fixes it`,
    async () => {
      const run = await runCaesarLive(cli, TIMEOUT_MS - 10_000, {
        scenario: "fix-on-retry",
        files: FILES,
        objective: "Make sh test.sh pass",
        args: ["--check", "sh test.sh", "--attempts", "2", "--follow-up", followUp],
      });
      expect(run.result.code, run.result.stderr).toBe(0);
      const report = run.output.state.report as {
        status: string;
        summary: string;
        checks: { command: string; passed: boolean }[];
        attempts: Attempt[];
      };
      expect(report.status).toBe("success");
      expect(report.summary).toBe("Fixed value.txt; the check passes now.");
      expect(report.checks).toMatchObject([{ command: "sh test.sh", passed: true }]);
      expect(report.attempts.map((a) => [a.attempt, a.how, a.checks_passed])).toEqual([
        [1, "first", false],
        [2, how, true],
      ]);
      expect(report.attempts[0]!.checks[0]).toMatchObject({ passed: false, exit_code: 1 });
      if (how === "resumed") {
        // The same session, continued: codex's thread id, as its stream gave it both times.
        expect(report.attempts[0]!.session).toMatch(/\S{8,}/);
        expect(report.attempts[1]!.session).toBe(report.attempts[0]!.session);
      }
      expect(readFileSync(join(run.worktree, "value.txt"), "utf8")).toBe("fixed\n");
      const started = run.events.filter((event) => event.type === "started");
      expect(started).toHaveLength(2);
      if (how === "resumed") expect(String((started[1] as { command?: string }).command)).toContain("resume");
      const progress = run.events
        .filter((event) => event.type === "progress")
        .map((event) => (event as { message: string }).message);
      expect(progress.some((message) => message.startsWith("attempt 2 of 2: 1 check(s) failed"))).toBe(true);
      const checks = run.events.filter((event) => event.type === "tool_use" && event.tool === "check");
      expect(checks.map((event) => (event as { status: string }).status)).toEqual([
        "started",
        "failed",
        "started",
        "succeeded",
      ]);
    },
    TIMEOUT_MS,
  );
});
