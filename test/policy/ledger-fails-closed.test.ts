import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { adversaryProject, detailsOf, fixture, runRoot, taskIds } from "../helpers/adversary.js";
import { FIXTURE_BIN } from "../helpers/repo.js";

// A budget ledger that cannot be read refuses what draws on it, naming the file: counted as empty, it
// would hand the tree its whole budget again.

const ALLOW = '[risk_profiles.default]\ndelegation_policy = { mode = "allow" }\n';

describe("a delegation tree whose budget ledger is corrupt", () => {
  it("starts no further task: budget_ledger_unreadable, naming the ledger", async () => {
    const { root, env } = adversaryProject(`[policy]\nmax_tasks_per_hour = 5\n${ALLOW}`, {
      attacker: fixture("corrupt-ledger"),
      other: join(FIXTURE_BIN, "conformant.sh"),
    });
    const { id } = await runRoot(root, env, [
      "--agent",
      "attacker",
      "--mode",
      "read-only",
      '{"other":"other"}',
    ]);
    const details = detailsOf(root, id);
    const [attempt] = details.attempts;
    expect(attempt!.code, JSON.stringify(attempt)).toBe("budget_ledger_unreadable");
    expect(attempt!.summary).toContain(String(details.ledger));
    expect(attempt!.detail).toContain("Nothing was started.");
    expect(taskIds(root)).toEqual([id]);
  }, 300_000);
});
