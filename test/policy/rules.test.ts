import { describe, expect, it } from "vitest";
import type { AgentAdapter } from "../../src/agents/adapter.js";
import { mergeLayers } from "../../src/config/effective.js";
import type { ConfigFile } from "../../src/config/schema.js";
import { admissionOf } from "../../src/policy/admission.js";
import { type CallerTask, decideDelegation } from "../../src/policy/delegation.js";
import { escalations } from "../../src/policy/escalation.js";

const config = (file: ConfigFile) => mergeLayers([["project", "p", file]]);
const target = (id: string, product = id) => ({ id, product }) as AgentAdapter;
const caller = (agent: string, extra: Partial<CallerTask> = {}): CallerTask => ({
  id: "t_parent",
  agent,
  product: agent,
  depth: 1,
  kind: "root",
  ...extra,
});
const allow = { risk_profiles: { default: { delegation_policy: { mode: "allow" as const } } } };

describe("delegation rules, each refusal string exactly", () => {
  it("depth", () => {
    expect(() =>
      decideDelegation(config({ policy: { max_depth: 2 } }), caller("a", { depth: 2 }), target("b")),
    ).toThrow("Delegation depth limit reached (2/2).");
  });

  it("depth as the reference counts it: max_depth = 1 is one hop, the main agent's", () => {
    // The first task (depth 1) may not delegate under max_depth = 1; under 2 it may, once.
    const one = config({ policy: { max_depth: 1 }, ...allow });
    expect(() => decideDelegation(one, caller("a", { depth: 1 }), target("b"))).toThrow(
      "Delegation depth limit reached (1/1).",
    );
    const two = config({ policy: { max_depth: 2 }, ...allow });
    expect(decideDelegation(two, caller("a", { depth: 1 }), target("b")).kind).toBe("delegate");
  });

  it("delegation_policy forbidden by default", () => {
    expect(() => decideDelegation(config({}), caller("codex"), target("claude"))).toThrow(
      'delegation is forbidden for caller "codex" by risk profile "default" delegation_policy; set [risk_profiles.default].delegation_policy mode = "allow"',
    );
  });

  it("a disabled target is never reachable", () => {
    expect(() =>
      decideDelegation(
        config({ ...allow, agents: { claude: { enabled: false } } }),
        caller("codex"),
        target("claude"),
      ),
    ).toThrow('delegate target "claude" is not reachable from "codex": the target agent is disabled');
    expect(() =>
      decideDelegation(
        config({ ...allow, agents: { codex: { delegates: ["claude"] }, claude: { enabled: false } } }),
        caller("codex"),
        target("claude"),
      ),
    ).toThrow("the target agent is disabled");
  });

  it("a different risk profile needs an explicit delegates entry", () => {
    const file: ConfigFile = {
      risk_profiles: { strict: { delegation_policy: { mode: "allow" } } },
      agents: { codex: { risk_profile: "strict" } },
    };
    expect(() => decideDelegation(config(file), caller("codex"), target("claude"))).toThrow(
      'delegate target "claude" is not reachable from "codex": different risk profile (caller uses "strict", target uses "default"). delegate_same_risk_profile only reaches agents with the same risk profile; add an explicit [agents.codex].delegates entry with the intended mode, or change one agent\'s risk_profile.',
    );
    const listed = { ...file, agents: { codex: { risk_profile: "strict", delegates: ["claude"] } } };
    expect(decideDelegation(config(listed), caller("codex"), target("claude"))).toEqual({
      kind: "delegate",
      mode: "bounded",
    });
    const independent = {
      ...file,
      agents: {
        codex: { risk_profile: "strict", delegates: [{ agent: "claude", mode: "independent" as const }] },
      },
    };
    expect(decideDelegation(config(independent), caller("codex"), target("claude"))).toEqual({
      kind: "delegate",
      mode: "independent",
    });
  });

  it("delegate_same_risk_profile off, target not listed", () => {
    const file: ConfigFile = { ...allow, agents: { codex: { delegate_same_risk_profile: false } } };
    expect(() => decideDelegation(config(file), caller("codex"), target("claude"))).toThrow(
      'delegate target "claude" is not reachable from "codex": delegate_same_risk_profile is disabled and the target is not listed in [agents.codex].delegates',
    );
  });

  it("same product: refused without allow_recursion, then capped at one spawn", () => {
    expect(() => decideDelegation(config({}), caller("claude"), target("claude-fast", "claude"))).toThrow(
      'spawn refused — "claude" may not run "claude-fast", the same agent (claude), under itself.',
    );
    // The refusal says the default is caesar's on purpose, and where that is explained.
    expect(() => decideDelegation(config({}), caller("claude"), target("claude"))).toThrow(
      expect.objectContaining({
        code: "recursion_refused",
        detail: expect.stringContaining(
          "Off by default on purpose, unlike the delegation runtime OACP follows",
        ),
      }),
    );
    const recursive = config({ policy: { allow_recursion: true } });
    expect(decideDelegation(recursive, caller("claude"), target("claude"))).toEqual({
      kind: "spawn",
      mode: "bounded",
    });
    expect(() => decideDelegation(recursive, caller("claude", { kind: "spawn" }), target("claude"))).toThrow(
      "spawn refused — a spawned task may not spawn its own sub-tasks (depth-1 cap).",
    );
  });
});

describe("no escalation, axis by axis", () => {
  const parent = {
    mode: "read-only" as const,
    network: false,
    isolation: "worktree" as const,
    timeMs: 60_000,
    maxTasksPerHour: 5,
    maxCostPerDay: 1,
    maxActionsPerHour: 100,
    tools: { allowed: null, excluded: [] } as { allowed: string[] | null; excluded: string[] },
  };
  it("names each field and both values", () => {
    expect(
      escalations(
        {
          mode: "write",
          network: true,
          isolation: "inplace",
          timeMs: 120_000,
          maxTasksPerHour: null,
          maxCostPerDay: 2,
          maxActionsPerHour: 101,
          tools: { allowed: null, excluded: [] },
        },
        parent,
      ),
    ).toEqual([
      { field: "mode", child: "write", parent: "read-only" },
      { field: "network", child: "on", parent: "off" },
      { field: "isolation", child: "inplace", parent: "worktree" },
      { field: "deadline", child: "2m00s", parent: "1m00s left" },
      { field: "max_tasks_per_hour", child: "unlimited", parent: "5" },
      { field: "max_cost_per_day", child: "2", parent: "1" },
      { field: "max_actions_per_hour", child: "101", parent: "100" },
    ]);
    expect(escalations({ ...parent, timeMs: 30_000 }, parent)).toEqual([]);
  });

  it("tools: a child never gets a tool its parent's allow-list lacks, nor loses one of its parent's exclusions", () => {
    const restricted = { ...parent, tools: { allowed: ["Read", "Grep"], excluded: ["WebFetch"] } };
    expect(
      escalations(
        { ...restricted, tools: { allowed: ["Read", "Bash"], excluded: ["WebFetch"] } },
        restricted,
      ),
    ).toEqual([{ field: "allowed_tools", child: "[Read, Bash]", parent: "[Read, Grep]" }]);
    expect(escalations({ ...restricted, tools: { allowed: null, excluded: [] } }, restricted)).toEqual([
      { field: "allowed_tools", child: "(every tool)", parent: "[Read, Grep]" },
      { field: "excluded_tools", child: "[]", parent: "[WebFetch]" },
    ]);
    expect(
      escalations(
        { ...restricted, tools: { allowed: ["Read"], excluded: ["WebFetch", "Bash"] } },
        restricted,
      ),
    ).toEqual([]);
  });
});

describe("admission", () => {
  it("says why and how to change it", () => {
    expect(admissionOf(config({ policy: { denied: ["codex"] } }), "codex")).toMatchObject({
      allowed: false,
      reason: "denied by [policy] denied (project configuration)",
      remedy: "caesar policy allow codex",
    });
    expect(admissionOf(config({ policy: { allowed: ["claude"] } }), "codex")).toMatchObject({
      allowed: false,
    });
    expect(admissionOf(config({ agents: { codex: { enabled: false } } }), "codex")).toMatchObject({
      allowed: false,
      remedy: "caesar agents enable codex",
    });
  });
});
