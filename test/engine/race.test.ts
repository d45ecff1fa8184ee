import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { ContenderRow } from "../../src/engine/follow/compare-tasks.js";
import { decideRace } from "../../src/engine/race/decide.js";
import type { RaceRecord } from "../../src/engine/store/race-record.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { FIXTURE_BIN, makeRepo, writeConfig } from "../helpers/repo.js";

function contender(id: string, env: Record<string, string>): string {
  const vars = Object.entries(env)
    .map(([key, value]) => `${key} = "${value}"`)
    .join(", ");
  return `[[agent]]\nid = "${id}"\nbin = "${join(FIXTURE_BIN, "fixer.sh")}"\nargs = ["{{prompt}}"]\nenv = { ${vars} }\n`;
}

function project(): string {
  const root = makeRepo({ "test.sh": "grep -q fixed value.txt\n", "value.txt": "broken\n" });
  writeConfig(
    root,
    [
      contender("good", { FIXER_ALWAYS: "1" }),
      contender("wrong", { FIXER_NEVER: "1" }),
      contender("slow", { FIXER_NEVER: "1", FIXER_SLEEP: "120" }),
      contender("bigger", { FIXER_ALWAYS: "1", FIXER_EXTRA: "100" }),
    ].join("\n"),
  );
  return root;
}

interface RaceJson {
  race_id: string;
  task_ids: string[];
  cancelled: string[];
  decision: {
    state: string;
    winner: string | null;
    reason: string;
    mode: string;
    ranking: { task_id: string; why: string; checks_passed: number; diff_lines: number | null }[];
  };
}

describe("caesar race", () => {
  it("three fixture agents, one passes its checks: it wins, the one still running is cancelled; --show says the same", async () => {
    const root = project();
    const result = await runCaesar(
      [
        "race",
        "--json",
        "--agent",
        "wrong",
        "--agent",
        "good",
        "--agent",
        "slow",
        "--check",
        "sh test.sh",
        "fix it",
      ],
      { cwd: root, timeoutMs: 180_000 },
    );
    expect(result.code, result.stderr).toBe(0);
    const race = parseJsonOutput<RaceJson>(result);
    const [wrong, good, slow] = race.task_ids;
    expect(race.decision).toMatchObject({ state: "decided", winner: good });
    // `slow` is certainly still running when `good` wins. `wrong` usually has failed its check by
    // then, but on a loaded machine it may still be running and is then cancelled too.
    expect(race.cancelled).toContain(slow);
    expect(race.cancelled.filter((id) => id !== slow && id !== wrong)).toEqual([]);
    const shown = await runCaesar(["race", "--show", race.race_id], { cwd: root, timeoutMs: 60_000 });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`winner   ✓ ${good} (good) was the first to pass all 1 check(s)`);
    // Ranked 2 or 3: when `wrong` was cancelled too, the two tie on everything but their durations.
    expect(shown.stdout).toMatch(new RegExp(`[23] ${slow}  slow  cancelled: ${good} won first`));
    expect(shown.stdout).toContain(`next     caesar diff ${good}   caesar apply ${good}`);
  }, 200_000);

  it("--best lets all finish and ranks them: checks passed, then the smaller diff; a loser's diff stays inspectable", async () => {
    const root = project();
    const result = await runCaesar(
      [
        "race",
        "--json",
        "--best",
        "--agent",
        "bigger",
        "--agent",
        "wrong",
        "--agent",
        "good",
        "--check",
        "sh test.sh",
        "fix it",
      ],
      { cwd: root, timeoutMs: 180_000 },
    );
    expect(result.code, result.stderr).toBe(0);
    const race = parseJsonOutput<RaceJson>(result);
    const [bigger, wrong, good] = race.task_ids;
    expect(race.decision).toMatchObject({ mode: "best", state: "decided", winner: good });
    expect(
      race.decision.ranking.map((entry) => [entry.task_id, entry.checks_passed, entry.diff_lines]),
    ).toEqual([
      [good, 1, 2],
      [bigger, 1, 102],
      [wrong, 0, 0],
    ]);
    expect(race.cancelled).toEqual([]);
    // The runner-up lost on its bigger diff; what it did is still there to read.
    const diff = await runCaesar(["diff", bigger!], { cwd: root, timeoutMs: 60_000 });
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout).toContain("extra.txt");
  }, 200_000);

  it("exits 1 when nobody passes, and refuses bad races before anything starts", async () => {
    const root = project();
    const none = await runCaesar(
      ["race", "--json", "--agent", "wrong", "--agent", "wrong", "--check", "sh test.sh", "fix it"],
      { cwd: root, timeoutMs: 180_000 },
    );
    expect(none.code).toBe(1);
    expect(parseJsonOutput<RaceJson>(none).decision).toMatchObject({ state: "no_winner", winner: null });
    for (const [args, code] of [
      [["--agent", "good"], "race_arguments"],
      [["--agent", "good", "--agent", "no-such-agent"], "fanout_refused"],
      [["--agent", "good", "--agent", "wrong", "--check", "not-a-program-anywhere"], "fanout_refused"],
    ] as const) {
      const refused = await runCaesar(["race", "--json", ...args, "fix it"], { cwd: root });
      expect(refused.code, refused.stdout).not.toBe(0);
      expect(parseJsonOutput<{ error: { code: string } }>(refused).error.code).toBe(code);
    }
  }, 200_000);
});

describe("deciding a race", () => {
  const race = (mode: "first" | "best", checks = ["npm test"]): RaceRecord => ({
    version: 1,
    id: "r_00000001",
    created_at: "2026-12-01T00:00:00.000Z",
    mode,
    objective: "x",
    members: ["t_a", "t_b", "t_c"],
    checks,
  });
  const row = (
    id: string,
    passed: number,
    total: number,
    lines: number | null,
    ms: number,
    extra: Partial<ContenderRow> = {},
  ) =>
    ({
      task_id: id,
      agent: id.slice(2),
      phase: "finished",
      outcome: "succeeded",
      status: passed === total ? "success" : "partial",
      summary: "",
      criteria: { listed: [], met: null, failed_commands: [] },
      checks: { total, passed, state: total === 0 ? "none" : passed === total ? "passed" : "failed" },
      failed_checks: passed === total ? [] : ["npm test"],
      attempts: 1,
      diff: lines === null ? null : { files: 1, insertions: lines, deletions: 0, binary: 0 },
      duration_ms: ms,
      finished_at: new Date(Date.parse("2026-12-01T00:00:00.000Z") + ms).toISOString(),
      usage: null,
      findings: { high: 0, medium: 0, low: 0 },
      report_source: "file",
      ...extra,
    }) as ContenderRow;

  it("best: checks passed first, then the smaller diff, then time, then the order asked", () => {
    const decision = decideRace(race("best"), [
      row("t_a", 1, 1, 50, 10),
      row("t_b", 1, 1, 5, 90),
      row("t_c", 0, 1, 1, 1),
    ]);
    expect(decision.winner).toBe("t_b");
    expect(decision.ranking.map((entry) => entry.task_id)).toEqual(["t_b", "t_a", "t_c"]);
    const tie = decideRace(race("best"), [
      row("t_a", 1, 1, 5, 20),
      row("t_b", 1, 1, 5, 10),
      row("t_c", 1, 1, 5, 10),
    ]);
    expect(tie.ranking.map((entry) => entry.task_id)).toEqual(["t_b", "t_c", "t_a"]);
  });

  it("ranks a loser that ran to its end before a quicker one that was cancelled", () => {
    const decision = decideRace(
      race("first"),
      [
        row("t_w", 1, 1, 1, 10),
        row("t_c", 0, 1, 0, 5, { outcome: "cancelled", status: null }),
        row("t_f", 0, 1, 0, 50),
      ],
      { task_id: "t_w", at: "x" },
    );
    expect(decision.ranking.map((entry) => entry.task_id)).toEqual(["t_w", "t_f", "t_c"]);
  });

  it("best waits for all; and its best must pass every check to win", () => {
    expect(
      decideRace(race("best"), [row("t_a", 1, 1, 1, 1), row("t_b", 0, 1, 1, 1, { phase: "running" })]).state,
    ).toBe("pending");
    const none = decideRace(race("best"), [row("t_a", 0, 2, 1, 1), row("t_b", 1, 2, 1, 1)]);
    expect(none).toMatchObject({ state: "no_winner", winner: null });
    expect(none.reason).toBe("No contender passed all its checks; the best passed 1/2.");
  });

  it("first: the claim wins over an earlier finish; without one, the earliest to pass", () => {
    const rows = [row("t_a", 1, 1, 1, 30), row("t_b", 1, 1, 1, 10), row("t_c", 0, 1, 1, 1)];
    expect(decideRace(race("first"), rows).winner).toBe("t_b");
    expect(decideRace(race("first"), rows, { task_id: "t_a", at: "x" }).winner).toBe("t_a");
    // A claim by a contender whose checks did not all pass is no evidence.
    expect(decideRace(race("first"), rows, { task_id: "t_c", at: "x" }).winner).toBe("t_b");
  });

  it("a race without checks decides nothing", () => {
    const decision = decideRace(race("first", []), [row("t_a", 0, 0, 1, 1), row("t_b", 0, 0, 1, 1)]);
    expect(decision).toMatchObject({ state: "no_winner", winner: null });
    expect(decision.reason).toContain("no checks");
  });
});
