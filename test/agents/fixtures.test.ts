import { describe, expect, it } from "vitest";
import { BUILTIN_ADAPTERS } from "../../src/agents/catalog.js";
import { describeEnding } from "../../src/engine/conductor/ending.js";
import { ReportSchema } from "../../src/protocol/report.js";
import { type Fixture, listFixtures, readFixture } from "../helpers/agent-fixtures.js";
import { pairingProblems, SHELL_TOOL, toolEvents, toolRun } from "../helpers/event-checks.js";
import { replayFixture } from "../helpers/replay.js";

/**
 * Every recorded run of a real CLI (test/fixtures/agents/<cli>/<version>/<case>.jsonl), replayed through
 * its adapter in milliseconds: what the live suite proved once is checked on every change, and a CLI
 * upgrade arrives as a new version folder to replay, not as a silent drift.
 */

const NATIVE = new Set(["codex", "claude"]);

const EXPECTATIONS: Record<
  string,
  (fixture: Fixture, replay: Awaited<ReturnType<typeof replayFixture>>) => void
> = {
  hello(fixture, { events, outcome }) {
    const shell = toolRun(events, SHELL_TOOL);
    expect(shell.start?.input_summary).toContain("echo OK > hello.txt");
    expect(shell.end?.status).toBe("succeeded");
    expect(shell.order[0]).toBeLessThan(shell.order[1]!);
    expect(outcome.failure).toBeUndefined();
    expect(outcome.usage?.output_tokens).toBeGreaterThan(0);
    // Every CLI names its session in its stream: what a follow-up attempt continues.
    expect(outcome.session).toMatch(/\S{8,}/);
    if (NATIVE.has(fixture.header.cli))
      expect(ReportSchema.safeParse(outcome.nativeReport).success).toBe(true);
    else expect(outcome.finalText).toContain("caesar:report");
  },
  "fail-401"(fixture, { events, outcome }) {
    expect(outcome.failure?.code).toBe("auth_failed");
    // One failure, one `error` event: the stream's own, or else the one the engine writes for it.
    const ending = describeEnding(
      { kind: "exited", exit: fixture.exit, streamFailure: outcome.failure },
      { agent: fixture.header.cli, timeoutMs: 60_000, outputTail: "" },
    );
    const engineWrites = ending.error && !ending.announced ? 1 : 0;
    expect(events.filter((event) => event.type === "error").length + engineWrites).toBe(1);
    expect(ending.error?.code).toBe("auth_failed");
  },
  "read-only"(_fixture, { events }) {
    const succeeded = toolEvents(events).filter((e) => SHELL_TOOL.test(e.tool) && e.status === "succeeded");
    expect(succeeded).toEqual([]);
  },
  "read-only-report"(_fixture, { events, outcome }) {
    const writes = toolEvents(events).filter((e) => e.status !== "started");
    expect(writes.map((e) => e.status)).toEqual(["succeeded", "failed"]);
    expect(writes[0]!.input_summary).toMatch(/report\.json$/);
    expect(outcome.findings?.[0]?.title).toMatch(/Permission denied/);
  },
  resume(_fixture, { events, outcome }) {
    // The second turn of a continued session: the scenario's second step, in the same session.
    const shell = toolRun(events, SHELL_TOOL);
    expect(shell.start?.input_summary).toContain("echo two > two.txt");
    expect(shell.end?.status).toBe("succeeded");
    expect(outcome.failure).toBeUndefined();
    expect(outcome.session).toMatch(/\S{8,}/);
  },
  channel(_fixture, { events }) {
    for (const tool of [/ask_orchestrator/, /submit_report/]) {
      const run = toolRun(events, tool);
      expect(run.start, String(tool)).toBeDefined();
      expect(run.end?.status).toBe("succeeded");
    }
  },
};

const fixtures = listFixtures().map(readFixture);

describe("recorded agent streams replayed through their adapters", () => {
  if (fixtures.length === 0) {
    it.skip("no fixtures recorded yet: run the live suites (test/agents/live-*.test.ts) once", () => {});
    return;
  }
  it.each(fixtures.map((f) => [`${f.header.cli} ${f.header.version} ${f.header.case}`, f] as const))(
    "%s",
    async (_name, fixture) => {
      const adapter = BUILTIN_ADAPTERS.find((candidate) => candidate.id === fixture.header.cli);
      expect(adapter, `no adapter for ${fixture.header.cli}`).toBeDefined();
      const replay = await replayFixture(adapter!, fixture);
      expect(pairingProblems(replay.events)).toEqual([]);
      const expectation = EXPECTATIONS[fixture.header.case];
      expect(expectation, `no expectations for case ${fixture.header.case}`).toBeDefined();
      expectation!(fixture, replay);
    },
  );

  it("has every case the live suite always runs, for every CLI and version", () => {
    const cases = new Map<string, Set<string>>();
    for (const f of fixtures) {
      const key = `${f.header.cli}/${f.header.version}`;
      cases.set(key, (cases.get(key) ?? new Set()).add(f.header.case));
    }
    for (const [key, found] of cases) {
      for (const required of ["hello", "fail-401", "read-only", "channel", "resume"])
        expect(found.has(required), `${key} ${required}`).toBe(true);
    }
  });
});
