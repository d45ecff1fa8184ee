import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  adversaryProject,
  callsOf,
  DELEGATOR,
  detailsOf,
  eventsOf,
  expectUntouched,
  findingsOf,
  fixture,
  refusedCodes,
  runRoot,
  stateOf,
  taskIds,
} from "../helpers/adversary.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { FIXTURE_BIN, git, taskDir, taskRecordDir } from "../helpers/repo.js";

/**
 * The agent caesar runs is an adversary too. Each attack is a fixture agent that tries it from inside a
 * real task, through the real CLI and through `caesar mcp serve`; each is refused or contained, the
 * user's tree is untouched, and the task store records what was tried on the offending task.
 */
const CONFORMANT = join(FIXTURE_BIN, "conformant.sh");
const ALLOW = '[risk_profiles.default]\ndelegation_policy = { mode = "allow" }\n';

describe("attack 1: an agent rewrites its own task files", () => {
  it("is governed by caesar's records: the depth limit still holds, the rewrite is recorded and undone", async () => {
    const { root, env } = adversaryProject(`[policy]\nmax_depth = 2\n${ALLOW}`, {
      planner: DELEGATOR,
      attacker: fixture("edit-records"),
      other: CONFORMANT,
    });
    const head = git(root, "rev-parse", "HEAD");
    const planner = JSON.stringify({
      name: "planner",
      calls: [{ agent: "attacker", flags: ["--mode", "read-only"], objective: { other: "other" } }],
    });
    const { id: top } = await runRoot(root, env, ["--agent", "planner", planner]);
    const attacker = callsOf(root, top)[0]!.task_id!;
    expect(stateOf(root, attacker)).toMatchObject({ depth: 2, parent_id: top, mode: "read-only" });

    const { attempts } = detailsOf(root, attacker);
    expect(attempts.map((a) => [a.via, a.code, a.summary])).toEqual([
      ["cli", "delegation_depth", "Delegation depth limit reached (2/2)."],
      ["mcp", "delegation_depth", "Delegation depth limit reached (2/2)."],
    ]);
    // Nothing started: the planner and the attacker only.
    expect(taskIds(root)).toEqual([top, attacker].sort());
    // The rewritten copies were put back as caesar wrote them.
    const record = readFileSync(join(taskRecordDir(root, attacker), "plan.json"), "utf8");
    expect(readFileSync(join(taskDir(root, attacker), "plan.json"), "utf8")).toBe(record);
    expect(JSON.parse(record)).toMatchObject({
      depth: 2,
      kind: "delegate",
      mode: "read-only",
      bounded: true,
    });
    // On record: an event per refusal and per rewrite, and findings in the attacker's report.
    expect(refusedCodes(root, attacker)).toEqual(["delegation_depth", "delegation_depth"]);
    const codes = eventsOf(root, attacker)
      .filter((e) => e.type === "error")
      .map((e) => e.code);
    expect(codes).toContain("records_rewritten");
    const findings = findingsOf(root, attacker);
    expect(findings).toContainEqual(
      expect.objectContaining({
        severity: "high",
        title: "The agent rewrote caesar's records in its task directory",
      }),
    );
    expect(
      findings.filter((f) => f.title.startsWith("caesar refused the agent's `run --agent other")),
    ).toHaveLength(2);
    expectUntouched(root, head);
  }, 300_000);
});

describe("attack 2: an agent forges a parent", () => {
  it("is refused whether the parent does not exist or is real but unproven", async () => {
    const { root, env } = adversaryProject(ALLOW, {
      planner: DELEGATOR,
      attacker: fixture("forge-parent"),
      other: CONFORMANT,
    });
    const head = git(root, "rev-parse", "HEAD");
    const planner = JSON.stringify({
      name: "planner",
      calls: [{ agent: "attacker", flags: ["--mode", "read-only"], objective: { other: "other" } }],
    });
    const { id: top } = await runRoot(root, env, ["--agent", "planner", planner]);
    const attacker = callsOf(root, top)[0]!.task_id!;
    const { attempts } = detailsOf(root, attacker);
    expect(attempts.map((a) => [a.via, a.code])).toEqual([
      ["cli", "nested_unproven"],
      ["cli", "nested_unproven"],
      ["mcp", "nested_unproven"],
      ["mcp", "nested_unproven"],
    ]);
    const nobody = `Nested request refused: CAESAR_TASK_ID names t_00000000, which is not a task caesar started in this project (${root}).`;
    const parent = `Nested request refused: ${top}'s credentials do not match (CAESAR_TASK_TOKEN is not the one caesar gave it).`;
    expect(attempts.map((a) => a.summary)).toEqual([nobody, parent, nobody, parent]);
    expect(attempts[0]!.detail).toContain("unset CAESAR_TASK_ID and CAESAR_TASK_TOKEN");
    expect(taskIds(root)).toEqual([top, attacker].sort());
    // Traced to the attacker (the agent it runs under), not to the task it named.
    expect(refusedCodes(root, attacker)).toEqual([
      "nested_unproven",
      "nested_unproven",
      "nested_unproven",
      "nested_unproven",
    ]);
    expect(refusedCodes(root, top)).toEqual([]);
    expect(findingsOf(root, attacker).filter((f) => f.severity === "high")).toHaveLength(4);
    expectUntouched(root, head);
  }, 300_000);
});

describe("attack 3: an agent drops caesar's variables", () => {
  it("is still taken for what it is: from its worktree, its task directory, or elsewhere with --root", async () => {
    const { root, env } = adversaryProject(ALLOW, { attacker: fixture("drop-vars"), other: CONFORMANT });
    const head = git(root, "rev-parse", "HEAD");
    const { id } = await runRoot(root, env, [
      "--agent",
      "attacker",
      "--mode",
      "write",
      JSON.stringify({ other: "other", root }),
    ]);
    const { attempts } = detailsOf(root, id);
    expect(attempts.map((a) => [a.via, a.code])).toEqual([
      ["cli", "nested_without_credentials"],
      ["cli", "nested_without_credentials"],
      ["cli", "nested_without_credentials"],
      ["mcp", "nested_without_credentials"],
      ["mcp", "nested_without_credentials"],
    ]);
    const worktree = join(root, ".caesar", "wt", id);
    expect(attempts[0]!.summary).toBe(
      `Nested request refused: this process works inside task ${id}'s worktree (${worktree}) without the task's credentials.`,
    );
    expect(attempts[1]!.summary).toContain(`inside task ${id}'s task directory`);
    // From /tmp, with every variable gone: the agent it descends from gives it away.
    expect(attempts[2]!.summary).toMatch(
      new RegExp(`descends from task ${id}'s agent \\(pid \\d+\\) but carries no task credentials`),
    );
    expect(attempts[4]!.text).toContain(`descends from task ${id}'s agent`);
    expect(taskIds(root)).toEqual([id]);
    expect(refusedCodes(root, id)).toHaveLength(5);
    expectUntouched(root, head);
  }, 300_000);
});

describe("attack 4: an agent acts outside its isolation through caesar", () => {
  it("may not apply, cancel, answer, diff or gc tasks outside its subtree", async () => {
    const { root, env } = adversaryProject("", {
      attacker: fixture("outside-subtree"),
      writer: join(FIXTURE_BIN, "writer.sh"),
      hang: join(FIXTURE_BIN, "hang.sh"),
    });
    const head = git(root, "rev-parse", "HEAD");
    const { id: victim } = await runRoot(root, env, ["--agent", "writer", "write out.txt"]);
    const running = parseJsonOutput<{ task_id: string }>(
      await runCaesar(["run", "--detach", "--json", "--agent", "hang", "keep running"], { cwd: root, env }),
    ).task_id;
    try {
      const { id } = await runRoot(root, env, [
        "--agent",
        "attacker",
        "--mode",
        "write",
        JSON.stringify({ victim, running }),
      ]);
      const { attempts } = detailsOf(root, id);
      const outside = attempts.filter((a) => a.code === "outside_subtree");
      expect(attempts.map((a) => a.code)).toEqual([
        "outside_subtree", // apply
        "outside_subtree", // cancel
        "outside_subtree", // answer
        "outside_subtree", // diff
        null, // gc: runs, on its own subtree only (empty)
        "outside_subtree",
        "outside_subtree",
        "outside_subtree",
        "outside_subtree",
        "outside_subtree", // a race comparison reads diffs
      ]);
      expect(outside[0]!.summary).toBe(
        `Refused: task ${id} may only apply tasks it started (its subtree), not ${victim}, which it did not start.`,
      );
      expect(attempts[4]!.result).toEqual({ entries: [] });
      // Nothing happened to the others: the victim is not applied, its worktree is there, the other runs.
      expect(stateOf(root, victim).applied).toBeNull();
      expect(git(root, "worktree", "list")).toContain(join(".caesar", "wt", victim));
      expect(stateOf(root, running)).toMatchObject({ phase: "running", cancel_requested: null });
      expect(existsSync(join(taskDir(root, victim), "answers"))).toBe(false);
    } finally {
      await runCaesar(["cancel", running], { cwd: root, env });
    }
    expectUntouched(root, head);
  }, 300_000);

  it("applies its own sub-tasks into its worktree, never into the user's tree (CLI and MCP)", async () => {
    const { root, env } = adversaryProject(ALLOW, {
      parent: fixture("apply-child"),
      writer: join(FIXTURE_BIN, "writer.sh"),
    });
    const head = git(root, "rev-parse", "HEAD");
    const { id } = await runRoot(root, env, [
      "--agent",
      "parent",
      "--mode",
      "write",
      JSON.stringify({ writer: "writer" }),
    ]);
    const details = detailsOf(root, id);
    const [first, applied, , , appliedMcp] = details.attempts;
    expect(first!.result).toMatchObject({ report: { status: "success" } });
    expect(applied!.result).toMatchObject({ applied: true, files: ["out.txt"] });
    expect(appliedMcp!.result).toMatchObject({ applied: true, files: ["second.txt"] });
    expect(appliedMcp!.result!.staged_in).toBe(join(root, ".caesar", "wt", id));
    expect(details.status).toBe("A  out.txt\nA  second.txt\n");
    expectUntouched(root, head);
  }, 300_000);
});

describe("attack 5: a batch overspends its tree's budget", () => {
  it("fan-out and race start all or nothing, and say exactly what started", async () => {
    const { root, env } = adversaryProject(`[policy]\nmax_tasks_per_hour = 3\n${ALLOW}`, {
      attacker: fixture("overspend"),
      other: CONFORMANT,
    });
    const head = git(root, "rev-parse", "HEAD");
    const { id } = await runRoot(root, env, [
      "--agent",
      "attacker",
      "--mode",
      "read-only",
      '{"other":"other"}',
    ]);
    const [fanout, race, fits] = detailsOf(root, id).attempts;
    const refusal = `Budget exhausted: the delegation tree of ${id} started 1 task(s) in the last hour; 3 more would exceed max_tasks_per_hour = 3.`;
    expect(fanout).toMatchObject({ isError: true, code: "budget_tasks", summary: refusal });
    expect(fanout!.text).toContain("Nothing was started.");
    expect(race).toMatchObject({ isError: true, code: "budget_tasks", summary: refusal });
    expect(race!.text).toContain("Nothing was started.");
    const started = (fits!.result as { started: string[] }).started;
    expect(started).toHaveLength(2);
    // The store and the ledger agree: the attacker and the two of the last fan-out, nothing else.
    expect(taskIds(root)).toEqual([id, ...started].sort());
    const ledger = JSON.parse(readFileSync(join(root, ".git", "caesar", "budgets", `${id}.json`), "utf8"));
    expect(ledger.entries.map((e: { task_id: string }) => e.task_id).sort()).toEqual([id, ...started].sort());
    expect(refusedCodes(root, id)).toEqual(["budget_tasks", "budget_tasks"]);
    expectUntouched(root, head);
  }, 300_000);
});

describe("attack 8: the roster", () => {
  it("shows what the calling task may reach, and why not for the rest (CLI and MCP)", async () => {
    const { root, env } = adversaryProject('[policy]\ndenied = ["writer"]\n', {
      attacker: fixture("roster"),
      other: CONFORMANT,
      writer: join(FIXTURE_BIN, "writer.sh"),
    });
    const { id } = await runRoot(root, env, ["--agent", "attacker", "--mode", "read-only", "{}"]);
    const [listed, viaMcp] = detailsOf(root, id).attempts;
    const cli = listed!.result as unknown as {
      id: string;
      reach: { allowed: boolean; reason: string | null };
    }[];
    const reach = Object.fromEntries(cli.map((agent) => [agent.id, agent.reach]));
    expect(reach.other).toEqual({
      allowed: false,
      reason:
        'delegation is forbidden for caller "attacker" by risk profile "default" delegation_policy; set [risk_profiles.default].delegation_policy mode = "allow"',
      remedy: expect.stringContaining("may only work itself"),
      delegation: null,
    });
    expect(reach.writer?.reason).toBe("denied by [policy] denied (project configuration)");
    expect(reach.attacker?.reason).toContain("spawn refused");
    expect(Object.values(reach).every((r) => !r.allowed)).toBe(true);
    const agents = (viaMcp!.result as { caller: unknown; agents: { id: string; allowed: boolean }[] }).agents;
    expect((viaMcp!.result as { caller: { task_id: string } }).caller.task_id).toBe(id);
    expect(agents.every((agent) => !agent.allowed)).toBe(true);
  }, 300_000);

  it("lists a reachable agent with the kind of request it would be", async () => {
    const { root, env } = adversaryProject(
      `${ALLOW}\n[agents.attacker]\ndelegate_same_risk_profile = false\ndelegates = [{ agent = "writer", mode = "independent" }]\n`,
      { attacker: fixture("roster"), other: CONFORMANT, writer: join(FIXTURE_BIN, "writer.sh") },
    );
    const { id } = await runRoot(root, env, ["--agent", "attacker", "--mode", "read-only", "{}"]);
    const agents = (
      detailsOf(root, id).attempts[1]!.result as {
        agents: { id: string; allowed: boolean; not_allowed_because: string | null; delegation: unknown }[];
      }
    ).agents;
    const byId = Object.fromEntries(agents.map((agent) => [agent.id, agent]));
    expect(byId.writer).toMatchObject({
      allowed: true,
      delegation: { kind: "delegate", mode: "independent" },
    });
    expect(byId.other).toMatchObject({
      allowed: false,
      not_allowed_because:
        'delegate target "other" is not reachable from "attacker": delegate_same_risk_profile is disabled and the target is not listed in [agents.attacker].delegates',
    });
  }, 300_000);
});
