import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type Ledger, recordActionIn, reserveIn } from "../../src/policy/budget.js";
import { makeAcpProject } from "../helpers/acp-fixture.js";
import { callsOf, DELEGATOR, eventsOf, runRoot, stateOf, taskIds } from "../helpers/adversary.js";
import { CAESAR_BIN } from "../helpers/cli.js";
import { FIXTURE_BIN, tempDir } from "../helpers/repo.js";

/**
 * `max_actions_per_hour`: the tool calls a delegation tree's agents make, as their events show them
 * (a `tool_use` that starts), counted over a sliding hour in the tree's ledger, shared by a parent and its
 * bounded children. One call too many stops the task that made it (budget_actions), and the tree starts
 * nothing more until the hour has moved on.
 */
const HOUR = 3_600_000;
const LIMITS = { max_tasks_per_hour: null, max_cost_per_day: null, max_actions_per_hour: 2 };

describe("the tree's tool-call ledger", () => {
  it("counts over a sliding hour: the call past the limit is over it, and an hour later the tree may again", () => {
    const ledger: Ledger = { tree: "t_00000001", entries: [] };
    const t0 = Date.parse("2026-01-01T00:00:00Z");
    expect(recordActionIn(ledger, "t_00000001", 2, t0).exceeded).toBe(false);
    expect(recordActionIn(ledger, "t_00000002", 2, t0 + 1000)).toMatchObject({ made: 2, exceeded: false });
    // The tree has no call left: a new task in it is refused, saying why.
    expect(() => reserveIn(ledger, ["t_00000003"], LIMITS, true, t0 + 2000)).toThrow(
      "Budget exhausted: the delegation tree of t_00000001 made 2 tool call(s) in the last hour (max_actions_per_hour = 2).",
    );
    expect(recordActionIn(ledger, "t_00000001", 2, t0 + 3000)).toMatchObject({ made: 3, exceeded: true });
    // An hour after the first two, only the third still counts.
    expect(recordActionIn(ledger, "t_00000001", 2, t0 + HOUR + 1500)).toMatchObject({
      made: 2,
      exceeded: false,
    });
    // A burst counted in one write weighs all its calls, and the ledger grows by one entry, not by each call.
    const burst: Ledger = { tree: "t_00000006", entries: [] };
    expect(recordActionIn(burst, "t_00000006", 500, t0, 300)).toMatchObject({ made: 300, exceeded: false });
    expect(recordActionIn(burst, "t_00000006", 500, t0 + 10, 250)).toMatchObject({
      made: 550,
      exceeded: true,
    });
    expect(burst.actions).toHaveLength(2);
    reserveIn({ tree: "t_00000001", entries: [] }, ["t_00000004"], LIMITS, true, t0);
    // 0 is a hard zero: not even a new tree may start.
    expect(() =>
      reserveIn(
        { tree: "t_00000005", entries: [] },
        ["t_00000005"],
        { ...LIMITS, max_actions_per_hour: 0 },
        false,
      ),
    ).toThrow("max_actions_per_hour = 0 allows no tool call in a new delegation tree");
  });
});

describe("max_actions_per_hour, end to end", () => {
  it("stops the child that makes one call too many, and refuses the tree's next delegation", async () => {
    // A bounded child (an ACP agent) makes six tool calls, then would work on for ten minutes.
    const tools = Array.from({ length: 6 }, (_, index) => ({
      tool: { toolCallId: `call-${index}`, title: `read file ${index}`, kind: "read" },
      status: "completed",
      output: "ok",
    }));
    const project = makeAcpProject(
      [...tools, { sleep: 600_000 }, { message: "done" }],
      [
        "[policy]",
        "max_actions_per_hour = 3",
        "",
        "[risk_profiles.default]",
        'delegation_policy = { mode = "allow" }',
        "",
        "[[agent]]",
        'id = "planner"',
        `bin = ${JSON.stringify(DELEGATOR)}`,
        "",
        "[[agent]]",
        'id = "other"',
        `bin = ${JSON.stringify(join(FIXTURE_BIN, "conformant.sh"))}`,
        "",
      ].join("\n"),
    );
    const { root } = project;
    const env = { CAESAR_BIN, XDG_CONFIG_HOME: tempDir("caesar-xdg-") };
    const planner = JSON.stringify({
      name: "planner",
      calls: [
        { agent: "fixture-acp", flags: ["--timeout", "4m"], objective: "Read around" },
        { agent: "other", objective: "Then this" },
      ],
    });
    const { id } = await runRoot(root, env, ["--agent", "planner", planner], 300_000);
    const [reader, refused] = callsOf(root, id);
    const child = reader!.task_id!;
    const state = stateOf(root, child);
    expect(state.error, JSON.stringify(state.error)).toMatchObject({ code: "budget_actions" });
    // Calls seen while a count is being written are counted together: the count that goes over may be 4 or more.
    const made = Number(/made (\d+) tool call\(s\)/.exec(state.error.message)?.[1]);
    expect(made).toBeGreaterThanOrEqual(4);
    expect(state.error.message).toContain(
      `Agent "fixture-acp" was stopped: the delegation tree of ${id} made ${made} tool call(s) in the last hour, more than max_actions_per_hour = 3`,
    );
    expect(state.outcome).toBe("failed");
    const started = eventsOf(root, child).filter(
      (event) => event.type === "tool_use" && (event as { status?: string }).status === "started",
    );
    expect(started.length).toBeGreaterThanOrEqual(4);
    // The tree's next delegation is refused, and nothing else started.
    expect(refused!.error).toMatchObject({
      code: "budget_actions",
      summary: `Budget exhausted: the delegation tree of ${id} made ${made} tool call(s) in the last hour (max_actions_per_hour = 3).`,
    });
    expect(taskIds(root)).toEqual([id, child].sort());
    // The ledger holds the calls, with the task that made them.
    const ledger = JSON.parse(readFileSync(join(root, ".git", "caesar", "budgets", `${id}.json`), "utf8"));
    const actions: { task_id: string; count?: number }[] = ledger.actions;
    expect(new Set(actions.map((action) => action.task_id))).toEqual(new Set([child]));
    expect(actions.reduce((sum, action) => sum + (action.count ?? 1), 0)).toBe(made);
  }, 360_000);
});
