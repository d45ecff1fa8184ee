import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CAESAR_BIN, parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { FIXTURE_BIN, makeRepo, taskDir, writeFiles } from "../helpers/repo.js";

interface CallResult {
  agent: string;
  exit: number;
  task_id: string | null;
  report_status: string | null;
  error: { code: string; summary: string } | null;
}

const DELEGATOR = join(FIXTURE_BIN, "delegator.mjs");

function project(policy: string): string {
  const root = makeRepo({ "README.md": "# tree\n" });
  const agents = ["planner", "worker", "helper"]
    .map((id) => `[[agent]]\nid = "${id}"\nbin = "${DELEGATOR}"\n`)
    .join("\n");
  writeFiles(root, {
    ".caesar/config.toml": `${policy}\n[risk_profiles.default]\ndelegation_policy = { mode = "allow" }\n\n${agents}`,
  });
  return root;
}

function stateOf(root: string, id: string) {
  return JSON.parse(readFileSync(join(taskDir(root, id), "state.json"), "utf8"));
}

function callsOf(root: string, id: string): CallResult[] {
  return JSON.parse(stateOf(root, id).report.details) as CallResult[];
}

describe("a three-level delegation tree (agent → delegate → spawn), end to end", () => {
  it("records depth and parents, shares one budget, and refuses escalation, recursion beyond one spawn, and overspending", async () => {
    // The spawned worker is depth 3 (the person is 0): max_depth 4 lets the spawn cap, not depth, refuse it.
    const root = project("[policy]\nallow_recursion = true\nmax_tasks_per_hour = 3\nmax_depth = 4\n");
    const spawned = {
      name: "spawned worker",
      calls: [
        { agent: "worker", flags: ["--mode", "read-only"], objective: { name: "too deep", calls: [] } },
      ],
    };
    const worker = {
      name: "worker",
      calls: [
        { agent: "helper", flags: ["--mode", "write"], objective: { name: "escalate", calls: [] } },
        { agent: "worker", flags: [], objective: spawned },
        { agent: "helper", flags: [], objective: { name: "over budget", calls: [] } },
      ],
    };
    const planner = {
      name: "planner",
      calls: [{ agent: "worker", flags: ["--mode", "read-only"], objective: worker }],
    };

    const result = await runCaesar(["run", "--json", "--agent", "planner", JSON.stringify(planner)], {
      cwd: root,
      env: { CAESAR_BIN },
      timeoutMs: 120_000,
    });
    expect(result.code, result.stderr).toBe(0);
    const top = parseJsonOutput<{ task_id: string }>(result).task_id;

    // level 0 → 1: the planner delegated to the worker (a different agent, same risk profile: bounded)
    const [toWorker] = callsOf(root, top);
    expect(toWorker).toMatchObject({ agent: "worker", exit: 0, report_status: "success", error: null });
    const workerId = toWorker!.task_id!;
    const workerState = stateOf(root, workerId);
    expect(workerState).toMatchObject({ parent_id: top, depth: 2, mode: "read-only" });

    const [escalation, spawn, overBudget] = callsOf(root, workerId);
    // a bounded child may not exceed its parent: the read-only worker cannot get a write child
    expect(escalation!.error).toEqual({
      code: "delegation_escalation",
      summary: `delegation escalates beyond the parent ${workerId}: child mode=write exceeds parent's read-only`,
      detail: expect.stringContaining("A bounded child may not exceed its parent"),
    });
    expect(escalation!.task_id).toBeNull();
    // level 1 → 2: the worker re-ran itself (a spawn, allowed by allow_recursion)
    expect(spawn).toMatchObject({ agent: "worker", exit: 0, report_status: "success" });
    const spawnedState = stateOf(root, spawn!.task_id!);
    expect(spawnedState).toMatchObject({ parent_id: workerId, depth: 3 });
    // the spawned worker may not spawn again: the depth-1 cap
    const [tooDeep] = callsOf(root, spawn!.task_id!);
    expect(tooDeep!.error?.summary).toBe(
      "spawn refused — a spawned task may not spawn its own sub-tasks (depth-1 cap).",
    );
    // one budget for the whole tree: planner + worker + spawned worker = 3 = max_tasks_per_hour
    expect(overBudget!.error?.code).toBe("budget_tasks");
    expect(overBudget!.error?.summary).toBe(
      `Budget exhausted: the delegation tree of ${top} started 3 task(s) in the last hour (max_tasks_per_hour = 3).`,
    );
    const ledger = JSON.parse(readFileSync(join(root, ".git", "caesar", "budgets", `${top}.json`), "utf8"));
    expect(ledger.entries.map((e: { task_id: string }) => e.task_id).sort()).toEqual(
      [top, workerId, spawn!.task_id].sort(),
    );
    // each reservation was settled when its task ended: committed, since every agent ran
    expect(ledger.entries.map((e: { state: string }) => e.state)).toEqual([
      "committed",
      "committed",
      "committed",
    ]);
    // refused delegations left nothing behind: exactly three task directories
    const ps = parseJsonOutput<{ id: string }[]>(await runCaesar(["ps", "--all", "--json"], { cwd: root }));
    expect(ps).toHaveLength(3);
  });

  it("enforces the depth limit with the seed's message, and the forbidden policy by default", async () => {
    // Two hops from the main agent (depth 0): the planner (1) delegates, its worker (2) may not.
    const deep = project("[policy]\nmax_depth = 2\n");
    const planner = {
      name: "planner",
      calls: [
        {
          agent: "worker",
          objective: { name: "worker", calls: [{ agent: "helper", objective: { name: "x", calls: [] } }] },
        },
      ],
    };
    const result = await runCaesar(["run", "--json", "--agent", "planner", JSON.stringify(planner)], {
      cwd: deep,
      env: { CAESAR_BIN },
      timeoutMs: 120_000,
    });
    const top = parseJsonOutput<{ task_id: string }>(result).task_id;
    const workerId = callsOf(deep, top)[0]!.task_id!;
    expect(callsOf(deep, workerId)[0]!.error?.summary).toBe("Delegation depth limit reached (2/2).");

    const forbidden = makeRepo();
    writeFiles(forbidden, {
      ".caesar/config.toml": ["planner", "worker"]
        .map((id) => `[[agent]]\nid = "${id}"\nbin = "${DELEGATOR}"\n`)
        .join("\n"),
    });
    const refused = await runCaesar(
      [
        "run",
        "--json",
        "--agent",
        "planner",
        JSON.stringify({ name: "p", calls: [{ agent: "worker", objective: "x" }] }),
      ],
      {
        cwd: forbidden,
        env: { CAESAR_BIN },
        timeoutMs: 60_000,
      },
    );
    const id = parseJsonOutput<{ task_id: string }>(refused).task_id;
    expect(callsOf(forbidden, id)[0]!.error?.summary).toBe(
      'delegation is forbidden for caller "planner" by risk profile "default" delegation_policy; set [risk_profiles.default].delegation_policy mode = "allow"',
    );
  });

  it("tool restrictions, as the reference bounds them: the parent's tools are the ceiling, a child's list narrows them (never refused), an empty intersection runs without tools, risk profiles set tools too", async () => {
    const root = project(
      [
        '[agents.planner]\nallowed_tools = ["Read", "Grep"]\nexcluded_tools = ["WebFetch"]\ndelegates = ["worker"]\n',
        '[agents.worker]\nallowed_tools = ["Read", "Bash"]\nrisk_profile = "narrow"\n',
        '[agents.helper]\nallowed_tools = ["Write"]\n',
        '[risk_profiles.narrow]\nexcluded_tools = ["Task"]\n',
      ].join("\n"),
    );
    const planner = {
      name: "planner",
      calls: [
        { agent: "worker", objective: { name: "wider", calls: [] } },
        { agent: "helper", objective: { name: "disjoint", calls: [] } },
      ],
    };
    const result = await runCaesar(["run", "--json", "--agent", "planner", JSON.stringify(planner)], {
      cwd: root,
      env: { CAESAR_BIN },
      timeoutMs: 120_000,
    });
    const top = parseJsonOutput<{ task_id: string; report: { findings: { title: string }[] } }>(result);
    expect(top.report.findings.map((f) => f.title)).toContain("Tool restrictions could not be enforced");
    const [wider, disjoint] = callsOf(root, top.task_id);
    // A wider list is narrowed to the parent's (Bash dropped), and its risk profile's exclusion added.
    expect(wider!.error).toBeNull();
    const planOf = (id: string) => JSON.parse(readFileSync(join(taskDir(root, id), "plan.json"), "utf8"));
    expect(planOf(wider!.task_id!).tools).toEqual({ allowed: ["Read"], excluded: ["WebFetch", "Task"] });
    // Nothing in common: it still runs, without tools, and says so.
    expect(disjoint!.error).toBeNull();
    const plan = planOf(disjoint!.task_id!);
    expect(plan.tools).toEqual({ allowed: [], excluded: ["WebFetch"] });
    expect(plan.findings.map((f: { title: string }) => f.title)).toContain("No tool left for the agent");
  });
});
