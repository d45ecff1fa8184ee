import { describe, expect, it } from "vitest";
import {
  describeEnding,
  type EndingContext,
  endingFindings,
  synthesizeReport,
} from "../../../src/engine/conductor/ending.js";
import { parseDocument } from "../../../src/protocol/documents.js";
import { CaesarError } from "../../../src/support/errors.js";

const context: EndingContext = {
  agent: "codex",
  command: "codex exec --json 'Fix the parser'",
  timeoutMs: 600_000,
  outputTail: "warming up\ncrashing",
};

const report = (status: string) =>
  parseDocument("report", { protocol: "caesar.report/v1", status, summary: "the agent's words" });

describe("how a task ended, in words", () => {
  it("puts the reason first, then the command and the agent's last output, in every failure message", () => {
    const ending = describeEnding({ kind: "exited", exit: { code: 3, signal: null } }, context);
    expect(ending).toMatchObject({ outcome: "failed", exit: { code: 3, signal: null }, agentRan: true });
    expect(ending.headline).toBe('Agent "codex" exited with code 3: crashing');
    expect(ending.error).toEqual({
      code: "agent_failed",
      message: [
        'Agent "codex" exited with code 3: crashing',
        "command: codex exec --json 'Fix the parser'",
        "last output:",
        "warming up",
        "crashing",
      ].join("\n"),
    });
  });

  it.each([
    [
      "a timeout",
      { kind: "exited", exit: { code: null, signal: "SIGTERM" }, stoppedFor: "timed_out" },
      "timed_out",
      'Agent "codex" timed out after 10m00s and was stopped',
      "timed_out",
    ],
    [
      "a cancel",
      { kind: "exited", exit: { code: null, signal: "SIGTERM" }, stoppedFor: "cancelled" },
      "cancelled",
      'Agent "codex" was cancelled after 4.0s (cancel requested by cli)',
      "cancelled",
    ],
    [
      "a kill by someone else",
      { kind: "exited", exit: { code: null, signal: "SIGKILL" } },
      "failed",
      'Agent "codex" was killed by SIGKILL: crashing',
      "agent_killed",
    ],
    [
      "a missing binary",
      {
        kind: "spawn_failed",
        bin: "codex",
        error: Object.assign(new Error("spawn codex ENOENT"), { code: "ENOENT" }),
      },
      "failed",
      'Agent "codex" could not start: codex was not found (is it installed and on PATH?)',
      "agent_not_found",
    ],
    [
      "a setup command",
      { kind: "setup_failed", command: "npm ci", exit: { code: 1, signal: null } },
      "failed",
      "Setup command `npm ci` exited with code 1, so the agent did not run; fix [worktree] setup in .caesar/config.toml",
      "setup_failed",
    ],
    [
      "a cancel while waiting for a slot",
      { kind: "cancelled_before_start" },
      "cancelled",
      "Cancelled before the agent started (cancel requested by cli)",
      "cancelled",
    ],
    [
      "a dead conductor",
      { kind: "abandoned", by: "ps", conductorPid: 41, agentPid: 42, cancelled: false },
      "failed",
      "The task was finished by `caesar ps`: its conductor (pid 41) is gone; its agent (pid 42) was stopped",
      "conductor_died",
    ],
    [
      "a conductor that failed",
      { kind: "crashed", error: new CaesarError("git_failed", "git worktree failed") },
      "failed",
      "The task could not run: git worktree failed",
      "git_failed",
    ],
    [
      // A Node error's code (ENOSPC) is no code of the catalogue: state.error.code never carries it.
      "a conductor that failed on a system error",
      {
        kind: "crashed",
        error: Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" }),
      },
      "failed",
      "The task could not run: ENOSPC: no space left on device, write",
      "conductor_error",
    ],
  ] as const)("says %s the same way everywhere", (_what, cause, outcome, headline, code) => {
    const ending = describeEnding(cause, { ...context, cancelledBy: "cli", ranMs: 4000 });
    expect(ending.outcome).toBe(outcome);
    expect(ending.headline).toBe(headline);
    expect(ending.error?.code).toBe(code);
    expect(ending.error?.message.split("\n")[0]).toBe(headline);
    const synthesized = synthesizeReport(ending, 2);
    expect(synthesized.status).toBe("failed");
    expect(synthesized.summary).toBe(`${headline}. 2 file(s) changed according to git.`);
    expect(synthesized.details).toContain("Last output:\nwarming up\ncrashing");
  });

  it("says why from the agent's stream when it said so, and whether it already wrote the error event", () => {
    const ending = describeEnding(
      {
        kind: "exited",
        exit: { code: 1, signal: null },
        streamFailure: {
          message: "The model provider refused the credentials: 401",
          code: "auth_failed",
          announced: true,
        },
      },
      context,
    );
    expect(ending.headline).toBe(
      'Agent "codex" exited with code 1: The model provider refused the credentials: 401',
    );
    expect(ending.error?.code).toBe("auth_failed");
    expect(ending.announced).toBe(true);
    // A stop by caesar is never taken for the cause of the stop.
    const timedOut = describeEnding(
      {
        kind: "exited",
        exit: { code: null, signal: "SIGTERM" },
        stoppedFor: "timed_out",
        streamFailure: { message: "The agent was stopped: killed by SIGTERM", code: "agent_killed" },
      },
      context,
    );
    expect(timedOut.headline).toBe('Agent "codex" timed out after 10m00s and was stopped');
    expect(timedOut.announced).toBe(false);
  });

  it("is no failure when the agent exited 0: a synthesised report is then partial, never success", () => {
    const ending = describeEnding({ kind: "exited", exit: { code: 0, signal: null } }, context);
    expect(ending.error).toBeUndefined();
    expect(ending.outcome).toBe("succeeded");
    const synthesized = synthesizeReport(ending, undefined);
    expect(synthesized).toMatchObject({
      status: "partial",
      summary: "The agent exited 0 without a report.",
      details: expect.stringContaining("Last output:\nwarming up\ncrashing"),
    });
  });

  it("turns into a finding what a written report does not say", () => {
    const crashed = describeEnding({ kind: "exited", exit: { code: 3, signal: null } }, context);
    expect(endingFindings(crashed, report("success"))).toEqual([
      expect.objectContaining({
        severity: "high",
        title: 'The report says success, but agent "codex" exited with code 3: crashing',
      }),
    ]);
    expect(endingFindings(crashed, report("failed"))[0]).toMatchObject({ severity: "medium" });
    const timedOut = describeEnding(
      { kind: "exited", exit: { code: null, signal: "SIGTERM" }, stoppedFor: "timed_out" },
      context,
    );
    expect(endingFindings(timedOut, report("partial"))[0]).toMatchObject({ severity: "high" });
    const fine = describeEnding({ kind: "exited", exit: { code: 0, signal: null } }, context);
    expect(endingFindings(fine, report("success"))).toEqual([]);
  });

  it("keeps a long message bounded, with its reason and its last lines", () => {
    const long = describeEnding(
      { kind: "exited", exit: { code: 1, signal: null } },
      {
        ...context,
        outputTail: Array.from({ length: 40 }, (_, i) => `line ${i} ${"x".repeat(300)}`).join("\n"),
      },
    );
    expect(long.error!.message.length).toBeLessThanOrEqual(4000);
    expect(long.error!.message.startsWith('Agent "codex" exited with code 1: line 39')).toBe(true);
    expect(long.error!.message.endsWith("x")).toBe(true);
  });
});
