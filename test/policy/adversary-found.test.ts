import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isProcessAlive } from "../../src/support/process.js";
import {
  adversaryProject,
  callsOf,
  DELEGATOR,
  detailsOf,
  expectUntouched,
  findingsOf,
  fixture,
  refusedCodes,
  runRoot,
  stateOf,
  taskIds,
} from "../helpers/adversary.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { FIXTURE_BIN, git, taskDir } from "../helpers/repo.js";

/** Attacks found beyond the list, each with its fixture agent (test/fixtures/bin/adversary/). */
const CONFORMANT = join(FIXTURE_BIN, "conformant.sh");
const ALLOW = '[risk_profiles.default]\ndelegation_policy = { mode = "allow" }\n';
const REWRITTEN = "The agent rewrote caesar's records in its task directory";

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A process that has not ended (a zombie waiting for a slow init to reap it has). */
function alive(pid: number): boolean {
  return isProcessAlive(pid);
}

describe("an agent points caesar at a configuration of its own", () => {
  it("is governed by the configuration its tree's root was planned with (XDG_CONFIG_HOME, HOME ignored)", async () => {
    const { root, env } = adversaryProject("", { attacker: fixture("redirect-config"), other: CONFORMANT });
    const head = git(root, "rev-parse", "HEAD");
    const { id } = await runRoot(root, env, [
      "--agent",
      "attacker",
      "--mode",
      "read-only",
      '{"other":"other"}',
    ]);
    const { attempts } = detailsOf(root, id);
    const forbidden =
      'delegation is forbidden for caller "attacker" by risk profile "default" delegation_policy; set [risk_profiles.default].delegation_policy mode = "allow"';
    expect(attempts.map((a) => [a.via, a.code, a.summary])).toEqual([
      ["cli", "delegation_forbidden", forbidden],
      ["mcp", "delegation_forbidden", forbidden],
    ]);
    expect(taskIds(root)).toEqual([id]);
    expect(refusedCodes(root, id)).toEqual(["delegation_forbidden", "delegation_forbidden"]);
    expectUntouched(root, head);
  }, 300_000);
});

describe("an agent plans its request in a directory of its own that shares the project's records", () => {
  it("is refused: a task's requests are planned in the project it was planned in (--root elsewhere)", async () => {
    const { root, env } = adversaryProject("", { attacker: fixture("foreign-root"), other: CONFORMANT });
    const head = git(root, "rev-parse", "HEAD");
    const { id } = await runRoot(root, { ...env, OTHER_BIN: CONFORMANT }, [
      "--agent",
      "attacker",
      '{"other":"other"}',
    ]);
    const { attempts } = detailsOf(root, id);
    expect(attempts.map((a) => [a.via, a.code])).toEqual([["cli", "nested_unproven"]]);
    expect(attempts[0]!.summary).toContain("its requests are planned there, not in");
    expect(taskIds(root)).toEqual([id]);
    expect(refusedCodes(root, id)).toEqual(["nested_unproven"]);
    expectUntouched(root, head);
  }, 300_000);
});

describe("an agent changes the rules through caesar's configuration commands", () => {
  it("is refused by every command that writes configuration, and nothing is written", async () => {
    const { root, env } = adversaryProject('[policy]\ndenied = ["other"]\n', {
      attacker: fixture("write-config"),
      other: CONFORMANT,
    });
    const head = git(root, "rev-parse", "HEAD");
    const before = readFileSync(join(root, ".caesar", "config.toml"), "utf8");
    const { id } = await runRoot(root, env, [
      "--agent",
      "attacker",
      "--mode",
      "read-only",
      '{"other":"other"}',
    ]);
    const { attempts } = detailsOf(root, id);
    expect(attempts.map((a) => a.code)).toEqual(Array(5).fill("configuration_in_task"));
    expect(attempts[0]!.summary).toBe(
      `Refused: \`caesar policy allow\` writes configuration, and task ${id} may not change the rules it runs under.`,
    );
    expect(attempts.every((a) => a.exit === 1)).toBe(true);
    expect(readFileSync(join(root, ".caesar", "config.toml"), "utf8")).toBe(before);
    expect(findingsOf(root, id).filter((f) => f.severity === "high")).toHaveLength(5);
    expectUntouched(root, head);
  }, 300_000);
});

describe("an agent steals its parent's credentials from /proc", () => {
  it("is refused: it runs under its own agent, not its parent's", async () => {
    const { root, env } = adversaryProject(ALLOW, {
      planner: DELEGATOR,
      thief: fixture("steal-token"),
      other: CONFORMANT,
    });
    const head = git(root, "rev-parse", "HEAD");
    const planner = JSON.stringify({
      name: "planner",
      calls: [{ agent: "thief", flags: ["--mode", "read-only"], objective: { other: "other" } }],
    });
    const { id: top } = await runRoot(root, env, ["--agent", "planner", "--mode", "write", planner]);
    const thief = callsOf(root, top)[0]!.task_id!;
    const details = detailsOf(root, thief);
    // Same Unix user: reading the parent's environment works (only an OS sandbox could stop that)…
    expect(details.stole).toBe(true);
    // …but caesar sees which agent the request really comes from.
    expect(details.attempts.map((a) => [a.via, a.code])).toEqual([
      ["cli", "nested_unproven"],
      ["mcp", "nested_unproven"],
    ]);
    expect(details.attempts[0]!.summary).toMatch(
      new RegExp(`runs under task ${thief}'s agent \\(pid \\d+\\), yet presents ${top}'s credentials`),
    );
    expect(taskIds(root)).toEqual([top, thief].sort());
    expect(refusedCodes(root, thief)).toEqual(["nested_unproven", "nested_unproven"]);
    expectUntouched(root, head);
  }, 300_000);
});

describe("an agent rewrites its state.json to turn caesar against others", () => {
  it("cannot make cancel signal another process, nor gc remove the user's branch", async () => {
    const { root, env } = adversaryProject("", { attacker: fixture("forge-pids") });
    git(root, "branch", "keep-me");
    const head = git(root, "rev-parse", "HEAD");
    const sentinel = spawn("sleep", ["300"], { detached: true, stdio: "ignore" });
    try {
      const started = await runCaesar(
        [
          "run",
          "--detach",
          "--json",
          "--agent",
          "attacker",
          "--mode",
          "write",
          JSON.stringify({ sentinel: sentinel.pid, branch: "keep-me", root }),
        ],
        { cwd: root, env },
      );
      const id = parseJsonOutput<{ task_id: string }>(started).task_id;
      const mirror = join(taskDir(root, id), "state.json");
      await until("the forged state.json", () =>
        readFileSync(mirror, "utf8").includes(`"pid": ${sentinel.pid}`) ? true : undefined,
      );
      const cancelled = await runCaesar(["cancel", id, "--json"], { cwd: root, env, timeoutMs: 60_000 });
      expect(parseJsonOutput<{ cancelled: boolean; outcome: string }>(cancelled)).toMatchObject({
        cancelled: true,
        outcome: "cancelled",
      });
      expect(alive(sentinel.pid!)).toBe(true);
      const gc = await runCaesar(["gc", "--force", "--json"], { cwd: root, env });
      expect(gc.code, gc.stderr).toBe(0);
      expect(git(root, "branch", "--list", "keep-me")).toContain("keep-me");
      expect(stateOf(root, id).worktree).toBe(join(root, ".caesar", "wt", id));
      expect(findingsOf(root, id)).toContainEqual(
        expect.objectContaining({ severity: "high", title: REWRITTEN }),
      );
      expectUntouched(root, head);
    } finally {
      sentinel.kill("SIGKILL");
    }
  }, 300_000);

  it("cannot hide a change from the verified diff", async () => {
    const { root, env } = adversaryProject("", { attacker: fixture("hide-changes") });
    const head = git(root, "rev-parse", "HEAD");
    const { id } = await runRoot(root, env, ["--agent", "attacker", "--mode", "write", "{}"]);
    const report = stateOf(root, id).report;
    expect(report.changes).toEqual([expect.objectContaining({ path: "secret.txt", action: "added" })]);
    expect(report.changes_verified_by).toBe("git");
    expect(findingsOf(root, id)).toContainEqual(
      expect.objectContaining({ severity: "high", title: REWRITTEN }),
    );
    expectUntouched(root, head);
  }, 300_000);
});
