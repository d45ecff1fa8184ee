import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import type { LineAgentAdapter } from "../../src/agents/adapter.js";
import { BUILTIN_ADAPTERS } from "../../src/agents/catalog.js";
import { ReportSchema } from "../../src/protocol/report.js";
import { createdByCaesarRun, runCaesarLive } from "./caesar-run-live.js";
import { pairingProblems, SHELL_TOOL, toolRun } from "./event-checks.js";
import { agentBinAvailable, created, runLive } from "./live-agent.js";
import { pinnedAgentCli, standInForMissing } from "./system-deps.js";

const PROBE = fileURLToPath(new URL("../fixtures/mcp-probe.mjs", import.meta.url));
/** Generous: the machines have two cores shared by parallel suites; opencode alone starts in ~10 s. */
const LIVE_TIMEOUT_MS = 150_000;

export interface LiveExpectations {
  /** The CLI has native structured output: the report must come back through it (tier 2). */
  nativeReport: boolean;
  /**
   * How read-only shows: `denied` (the call is attempted and refused, a finding says so) or
   * `not-offered` (the shell tool is removed: the model never gets to call it), `silent` (the OS sandbox
   * refuses the write and the CLI's stream does not report the call: codex 0.171 treats it as a denied
   * escalation).
   */
  readOnly: "denied" | "not-offered" | "silent";
  /** In read-only mode the agent may still write its report file in the task directory (and nothing else). */
  readOnlyReportFile?: boolean;
}

/**
 * The live suite of one real CLI, driven through its adapter against `caesar mock-model`, each case in a
 * fresh repository with fresh state: a shell tool that writes hello.txt, a 401, read-only mode, and the
 * return channel (a probe MCP server). Each run records its raw stream as a fixture when none exists for
 * this CLI version yet.
 */
export function defineLiveSuite(cli: string, expected: LiveExpectations): void {
  const adapter = BUILTIN_ADAPTERS.find((candidate) => candidate.id === cli) as LineAgentAdapter;
  if (!agentBinAvailable(cli)) {
    describe(`live ${cli}`, () => standInForMissing(pinnedAgentCli(cli)));
    return;
  }

  describe(`live ${cli}`, () => {
    // Each run leaves a repository and a CLI home (opencode's npm cache alone is ~20 MB): removed after
    // the test, unless CAESAR_KEEP_LIVE=1 keeps them to look into.
    afterEach(() => {
      if (process.env.CAESAR_KEEP_LIVE === "1") return;
      for (const dir of [...created, ...createdByCaesarRun()]) rmSync(dir, { recursive: true, force: true });
      created.length = 0;
    });

    it(
      "runs the shell tool (started, then succeeded, same id), writes hello.txt, recovers the report",
      async () => {
        const run = await runLive({ adapter, scenario: "hello", caseName: "hello" });
        expect(run.exit, run.stderr.join("\n")).toEqual({ code: 0, signal: null });
        expect(readFileSync(join(run.workspace, "hello.txt"), "utf8")).toBe("OK\n");
        const shell = toolRun(run.events, SHELL_TOOL);
        expect(shell.start?.input_summary).toContain("echo OK > hello.txt");
        expect(shell.end?.status).toBe("succeeded");
        expect(shell.order[0]).toBeLessThan(shell.order[1]!);
        expect(pairingProblems(run.events)).toEqual([]);
        expect(run.outcome.failure).toBeUndefined();
        if (expected.nativeReport) {
          const report = ReportSchema.safeParse(run.outcome.nativeReport);
          expect(report.success, JSON.stringify(run.outcome.nativeReport)).toBe(true);
          expect(report.data?.summary).toBe("Created hello.txt containing OK.");
        } else {
          expect(run.outcome.nativeReport).toBeUndefined();
          expect(run.outcome.finalText).toContain("```json caesar:report");
        }
        // The report shows as its summary, not as a wall of JSON.
        const message = run.events.find((event) => event.type === "message");
        expect(message && "text" in message ? message.text : "").toContain("Report (success)");
      },
      LIVE_TIMEOUT_MS,
    );

    it(
      "turns a 401 into an error event and a failure naming the cause",
      async () => {
        const run = await runLive({ adapter, scenario: "fail-401", caseName: "fail-401" });
        expect(run.exit.code).not.toBe(0);
        expect(run.outcome.failure?.code).toBe("auth_failed");
        expect(run.events.some((event) => event.type === "error" && event.code === "auth_failed")).toBe(true);
        expect(existsSync(join(run.workspace, "hello.txt"))).toBe(false);
      },
      LIVE_TIMEOUT_MS,
    );

    it(
      "read-only: the shell command does not change the workspace",
      async () => {
        const run = await runLive({ adapter, scenario: "hello", caseName: "read-only", mode: "read-only" });
        expect(run.exit.code).toBe(0);
        expect(existsSync(join(run.workspace, "hello.txt"))).toBe(false);
        expect(pairingProblems(run.events)).toEqual([]);
        if (expected.readOnly === "denied") {
          expect(run.outcome.findings?.map((f) => f.title).join("\n")).toMatch(/Permission denied/);
          expect(toolRun(run.events, SHELL_TOOL).end?.status).toBe("failed");
        } else if (expected.readOnly === "not-offered") {
          const offered = run.requests.flatMap((request) => request.tools ?? []);
          expect(offered.some((tool) => SHELL_TOOL.test(tool))).toBe(false);
        }
      },
      LIVE_TIMEOUT_MS,
    );

    it.runIf(expected.readOnlyReportFile)(
      "read-only: the report file in the task directory is writable, the workspace is not",
      async () => {
        const report = JSON.stringify({
          protocol: "caesar.report/v1",
          status: "success",
          summary: "reviewed",
        });
        const run = await runLive({
          adapter,
          caseName: "read-only-report",
          mode: "read-only",
          scenario: {
            name: "read-only-report",
            steps: [
              { write: { path: "{{report_path}}", content: report } },
              { write: { path: "forbidden.txt", content: "x" } },
              { text: "done" },
            ],
          },
          prompt: ({ taskDir }) => `Review the code. Write your report to ${taskDir}/report.json`,
        });
        expect(JSON.parse(readFileSync(join(run.taskDir, "report.json"), "utf8")).summary).toBe("reviewed");
        expect(existsSync(join(run.workspace, "forbidden.txt"))).toBe(false);
        expect(run.outcome.findings?.map((f) => f.title).join("\n")).toMatch(/Permission denied/);
        expect(pairingProblems(run.events)).toEqual([]);
      },
      LIVE_TIMEOUT_MS,
    );

    it(
      "loads the return channel for this run only and calls it (task dir passed in args)",
      async () => {
        let log = "";
        const run = await runLive({
          adapter,
          scenario: "channel",
          caseName: "channel",
          channel: ({ root, taskDir }) => {
            log = join(root, "probe.log");
            return {
              name: "caesar",
              command: process.execPath,
              args: [PROBE, "--log", log, "--task-dir", taskDir],
              env: { CAESAR_CHANNEL_TASK_DIR: taskDir },
            };
          },
        });
        expect(run.exit, run.stderr.join("\n")).toEqual({ code: 0, signal: null });
        const calls = readFileSync(log, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((line) => JSON.parse(line) as { event: string; tool?: string; argv?: string[] });
        expect(calls.find((entry) => entry.event === "start")?.argv).toContain(run.taskDir);
        expect(calls.filter((entry) => entry.event === "call").map((entry) => entry.tool)).toEqual([
          "ask_orchestrator",
          "submit_report",
        ]);
        expect(existsSync(join(run.taskDir, "report.json"))).toBe(true);
        expect(existsSync(join(run.workspace, "hello.txt"))).toBe(true);
        const ask = toolRun(run.events, /ask_orchestrator/);
        expect(ask.start).toBeDefined();
        expect(ask.end?.status).toBe("succeeded");
        expect(pairingProblems(run.events)).toEqual([]);
      },
      LIVE_TIMEOUT_MS,
    );

    it(
      "continues its own session (resume): the follow-up turn carries the first one",
      async () => {
        const scenario = {
          name: "two-turns",
          steps: [
            { shell: "echo one > one.txt", description: "Write one" },
            { text: "first turn done" },
            { next_turn: "SECOND TURN" },
            { shell: "echo two > two.txt", description: "Write two" },
            { text: "second turn done" },
          ],
        };
        const first = await runLive({
          adapter,
          scenario,
          caseName: "resume-first",
          prompt: "Write one.txt",
          record: false,
          timeoutMs: LIVE_TIMEOUT_MS,
        });
        expect(first.exit, first.stderr.join("\n")).toEqual({ code: 0, signal: null });
        expect(first.outcome.session).toMatch(/\S{8,}/);
        const second = await runLive({
          adapter,
          scenario,
          caseName: "resume",
          prompt: "SECOND TURN: write two.txt",
          continueFrom: first,
          timeoutMs: LIVE_TIMEOUT_MS,
        });
        expect(second.exit, second.stderr.join("\n")).toEqual({ code: 0, signal: null });
        expect(second.launch.resume).toBe(first.outcome.session);
        expect(readFileSync(join(second.workspace, "two.txt"), "utf8")).toBe("two\n");
        expect(second.outcome.session).toBe(first.outcome.session);
        // The resumed session's first model request already replays the first turn's tool call.
        const model = second.requests.filter((request) => (request.tools?.length ?? 0) > 0);
        expect(model[0]?.history ?? 0).toBeGreaterThanOrEqual(1);
      },
      // Two runs of the CLI, each with the whole deadline a single run gets (opencode is slow to start).
      2 * LIVE_TIMEOUT_MS + 10_000,
    );

    it(
      "end to end: `caesar run --agent` leaves hello.txt in the worktree, the shell tool started then succeeded, changes verified by git",
      async () => {
        const run = await runCaesarLive(cli, LIVE_TIMEOUT_MS - 10_000);
        expect(run.result.code, run.result.stderr).toBe(0);
        const report = run.output.state.report as Record<string, unknown>;
        expect(run.output.state.outcome).toBe("succeeded");
        expect(report.status).toBe("success");
        expect(report.changes_verified_by).toBe("git");
        expect(report.changes).toEqual([{ path: "hello.txt", action: "added" }]);
        expect(readFileSync(join(run.worktree, "hello.txt"), "utf8")).toBe("OK\n");
        const shell = toolRun(run.events, SHELL_TOOL);
        expect(shell.start).toBeDefined();
        expect(shell.end?.status).toBe("succeeded");
        expect(shell.order[0]).toBeLessThan(shell.order[1]!);
        expect(pairingProblems(run.events)).toEqual([]);
        expect(report.report_source).toBe(expected.nativeReport ? "native" : "fenced");
      },
      LIVE_TIMEOUT_MS,
    );
  });
}
