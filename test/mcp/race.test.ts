import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CaesarMcp, connectCaesar, dataOf } from "../helpers/mcp.js";
import { FIXTURE_BIN, makeRepo, readJson, taskDir, writeConfig } from "../helpers/repo.js";

/** Contenders: the same fixture agent told (by its [[agent]] env) how to behave. */
function contender(id: string, env: Record<string, string>): string {
  const vars = Object.entries(env)
    .map(([key, value]) => `${key} = "${value}"`)
    .join(", ");
  return `[[agent]]\nid = "${id}"\nbin = "${join(FIXTURE_BIN, "fixer.sh")}"\nargs = ["{{prompt}}"]\nenv = { ${vars} }\n`;
}

interface Race {
  race_id: string;
  status: string;
  task_ids: string[];
  cancelled: string[];
  decision: {
    mode: string;
    state: string;
    winner: string | null;
    reason: string;
    ranking: {
      rank: number;
      task_id: string;
      agent: string;
      checks_passed: number;
      diff_lines: number | null;
      why: string;
    }[];
  };
  comparison: { task_id: string; checks: { passed: number; total: number; state: string } }[];
}

describe("caesar_race won on evidence", () => {
  let root: string;
  let mcp: CaesarMcp;
  beforeAll(async () => {
    root = makeRepo({ "test.sh": "grep -q fixed value.txt\n", "value.txt": "broken\n" });
    writeConfig(
      root,
      [
        contender("good", { FIXER_ALWAYS: "1" }),
        contender("bigger", { FIXER_ALWAYS: "1", FIXER_EXTRA: "200" }),
        contender("wrong", { FIXER_NEVER: "1" }),
        contender("slow", { FIXER_NEVER: "1", FIXER_SLEEP: "120" }),
      ].join("\n"),
    );
    mcp = await connectCaesar(["mcp", "serve"], { cwd: root });
  });
  afterAll(async () => {
    await mcp?.close();
  });

  it("the first whose checks all pass wins; a contender still running is cancelled and kept", async () => {
    const race = dataOf<Race>(
      await mcp.call("caesar_race", {
        objective: "Make sh test.sh pass",
        agents: ["wrong", "good", "slow"],
        checks: ["sh test.sh"],
        timeout_ms: 120_000,
      }),
    );
    const [wrong, good, slow] = race.task_ids;
    expect(race.status).toBe("complete");
    expect(race.decision).toMatchObject({ mode: "first", state: "decided", winner: good });
    expect(race.decision.reason).toContain(`${good} (good) was the first to pass all 1 check(s)`);
    // `wrong` has usually failed its check before `good` wins; on a loaded machine it may still be
    // running then, and is cancelled like `slow`.
    expect(race.cancelled).toContain(slow);
    expect(race.cancelled.filter((id) => id !== slow && id !== wrong)).toEqual([]);
    const why = Object.fromEntries(race.decision.ranking.map((entry) => [entry.task_id, entry.why]));
    expect(why[good!]).toBe("winner: the first to pass every check");
    expect(why[slow!]).toBe(`cancelled: ${good} won first`);
    if (race.cancelled.includes(wrong!)) expect(why[wrong!]).toBe(`cancelled: ${good} won first`);
    else expect(why[wrong!]).toMatch(/^passed 0\/1 checks \(failed: sh test\.sh\)/);
    // The loser that was cancelled keeps its worktree and its record: its diff stays inspectable.
    const state = readJson<{ outcome: string; worktree: string; cancel_requested: { by: string } }>(
      join(taskDir(root, slow!), "state.json"),
    );
    expect(state.outcome).toBe("cancelled");
    expect(state.cancel_requested.by).toBe(`race ${race.race_id}: ${good} won`);
    const diff = await mcp.call("caesar_diff", { task_id: slow! });
    expect(diff.isError).toBeFalsy();
  }, 200_000);

  it("with best: all finish; ranked by checks passed, then the smaller diff", async () => {
    const race = dataOf<Race>(
      await mcp.call("caesar_race", {
        objective: "Make sh test.sh pass",
        agents: ["bigger", "wrong", "good"],
        checks: ["sh test.sh"],
        best: true,
        timeout_ms: 120_000,
      }),
    );
    const [bigger, wrong, good] = race.task_ids;
    expect(race.decision).toMatchObject({ mode: "best", state: "decided", winner: good });
    expect(race.decision.ranking.map((entry) => entry.task_id)).toEqual([good, bigger, wrong]);
    expect(race.decision.ranking.map((entry) => entry.diff_lines)).toEqual([2, 202, 0]);
    expect(race.decision.reason).toContain("ranked by checks passed, then the smaller diff, then time");
    expect(race.cancelled).toEqual([]);
  }, 200_000);

  it("nobody passing: no winner, and the race says so", async () => {
    const race = dataOf<Race>(
      await mcp.call("caesar_race", {
        objective: "Make sh test.sh pass",
        agents: ["wrong", "wrong"],
        checks: ["sh test.sh"],
        timeout_ms: 120_000,
      }),
    );
    expect(race.decision).toMatchObject({
      state: "no_winner",
      winner: null,
      reason: "No contender passed all its checks.",
    });
  }, 200_000);
});
