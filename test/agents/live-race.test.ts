import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { mockSetupFor, writeSetupFiles } from "../../src/mock-model/agent-env.js";
import type { Scenario } from "../../src/mock-model/scenario.js";
import { type MockModelServer, startMockModel } from "../../src/mock-model/server.js";
import { agentStateFor } from "../helpers/agent-state.js";
import { liveCliEnv } from "../helpers/caesar-run-live.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { agentBinAvailable } from "../helpers/live-agent.js";
import { makeRepo, tempDir } from "../helpers/repo.js";
import { pinnedAgentCli, standInForMissing } from "../helpers/system-deps.js";

/**
 * A race of three real agent CLIs, each driven by a `caesar mock-model` of its own: codex and copilot
 * break the test (and claim success), claude fixes it. Only claude passes its check: it wins.
 */

const CLIS = ["codex", "claude", "copilot"];
const breaks: Scenario = {
  name: "breaks",
  steps: [
    { shell: "echo broken > value.txt", description: "Write value.txt" },
    { report: { status: "success", summary: "Done; the tests pass." } },
  ],
};
const fixes: Scenario = {
  name: "fixes",
  steps: [
    { shell: "echo fixed > value.txt", description: "Fix value.txt" },
    { report: { status: "success", summary: "Fixed value.txt." } },
  ],
};

const made: string[] = [];
const servers: MockModelServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
  if (process.env.CAESAR_KEEP_LIVE !== "1")
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

describe("live race: codex, claude and copilot; only claude passes its check", () => {
  const missing = CLIS.find((cli) => !agentBinAvailable(cli));
  if (missing) {
    standInForMissing(pinnedAgentCli(missing));
    return;
  }
  it("claude wins on evidence; the others failed their check or were cancelled, and are kept", async () => {
    const root = makeRepo({ "test.sh": "grep -qx fixed value.txt\n", "value.txt": "broken\n" });
    const state = tempDir("caesar-live-race-");
    made.push(root, state);
    const env = liveCliEnv(join(state, "home"));
    // One mock model per CLI: each CLI reads its own variables, so each meets its own scenario.
    for (const cli of CLIS) {
      const server = await startMockModel({ scenario: cli === "claude" ? fixes : breaks });
      servers.push(server);
      const setup = mockSetupFor(cli, server.url, join(agentStateFor(state), cli));
      await writeSetupFiles(setup);
      Object.assign(env, setup.env);
    }
    const result = await runCaesar(
      [
        "race",
        "--json",
        ...CLIS.flatMap((cli) => ["--agent", cli]),
        "--check",
        "sh test.sh",
        "Make sh test.sh pass",
      ],
      { cwd: root, env, timeoutMs: 280_000 },
    );
    expect(result.code, result.stderr).toBe(0);
    const race = parseJsonOutput<{
      task_ids: string[];
      decision: { state: string; winner: string; reason: string };
      comparison: { task_id: string; agent: string; outcome: string; checks: { state: string } }[];
    }>(result);
    const byAgent = Object.fromEntries(race.comparison.map((row) => [row.agent, row]));
    expect(race.decision.state).toBe("decided");
    expect(race.decision.winner).toBe(byAgent.claude!.task_id);
    expect(byAgent.claude!.checks.state).toBe("passed");
    for (const loser of ["codex", "copilot"]) {
      const row = byAgent[loser]!;
      expect(row.outcome === "cancelled" || row.checks.state === "failed", JSON.stringify(row)).toBe(true);
    }
  }, 300_000);
});
