import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { adversaryProject, callsOf, DELEGATOR, fixture, stateOf } from "../helpers/adversary.js";
import { CAESAR_BIN, parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { type CaesarMcp, connectCaesar, dataOf } from "../helpers/mcp.js";
import { FIXTURE_BIN, taskDir } from "../helpers/repo.js";

/** Delegation chains and slots, cancellation down a tree. */
const ALLOW = '[risk_profiles.default]\ndelegation_policy = { mode = "allow" }\n';
const LEVELS = ["a", "b", "c", "d"];

/** a → b → c → d: each level runs `caesar run` for the next and waits for it (the leaf sleeps a little). */
function chain(name: string): string {
  let objective: unknown = { name: `${name}-d`, calls: [] };
  for (const level of ["c", "b", "a"]) {
    const next = LEVELS[LEVELS.indexOf(level) + 1]!;
    // A bounded child may not outlast its parent: 4m, 3m, 2m under the top's 5m.
    const timeout = `${5 - LEVELS.indexOf(next)}m`;
    objective = {
      name: `${name}-${level}`,
      calls: [{ agent: next, flags: ["--mode", "read-only", "--timeout", timeout], objective }],
    };
  }
  return JSON.stringify(objective);
}

/** Every task of the chain under `top`, top first, with its outcome. */
function chainOf(root: string, top: string): { id: string; outcome: string; depth: number }[] {
  const out = [];
  let id: string | null = top;
  while (id) {
    const state = stateOf(root, id);
    out.push({ id, outcome: state.outcome, depth: state.depth });
    id = state.report?.details ? (callsOf(root, id)[0]?.task_id ?? null) : null;
  }
  return out;
}

function project(policy: string) {
  return adversaryProject(`${policy}\n${ALLOW}`, Object.fromEntries(LEVELS.map((id) => [id, DELEGATOR])));
}

describe("no slot deadlock in a delegation chain", () => {
  it("runs a chain deeper than max_parallel (four levels, two slots): each level runs in its parent's slot", async () => {
    // Four tasks under the main agent are four hops: max_depth 4 (the default, 3, stops the fourth).
    const { root, env } = project("[policy]\nmax_parallel = 2\nmax_depth = 4\n");
    const result = await runCaesar(["run", "--json", "--agent", "a", "--timeout", "5m", chain("deep")], {
      cwd: root,
      env,
      timeoutMs: 300_000,
    });
    expect(result.code, result.stderr).toBe(0);
    const levels = chainOf(root, parseJsonOutput<{ task_id: string }>(result).task_id);
    expect(levels.map((level) => [level.depth, level.outcome])).toEqual([
      [1, "succeeded"],
      [2, "succeeded"],
      [3, "succeeded"],
      [4, "succeeded"],
    ]);
  }, 300_000);

  it("runs two such chains at once at the default max_parallel (4, eight tasks)", async () => {
    const { root, env } = project("[policy]\nmax_depth = 4\n");
    const run = (name: string) =>
      runCaesar(["run", "--json", "--agent", "a", "--timeout", "5m", chain(name)], {
        cwd: root,
        env,
        timeoutMs: 300_000,
      });
    const results = await Promise.all([run("one"), run("two")]);
    for (const result of results) {
      expect(result.code, result.stderr).toBe(0);
      const levels = chainOf(root, parseJsonOutput<{ task_id: string }>(result).task_id);
      expect(levels.map((level) => level.outcome)).toEqual([
        "succeeded",
        "succeeded",
        "succeeded",
        "succeeded",
      ]);
    }
  }, 300_000);
});

describe("cancel cascades to bounded descendants", () => {
  async function spawnTree(root: string, env: NodeJS.ProcessEnv) {
    const started = await runCaesar(
      [
        "run",
        "--detach",
        "--json",
        "--agent",
        "spawner",
        JSON.stringify({ bounded: "hang", independent: "loner" }),
      ],
      { cwd: root, env },
    );
    const top = parseJsonOutput<{ task_id: string }>(started).task_id;
    const file = join(taskDir(root, top), "children.json");
    const deadline = Date.now() + 90_000;
    for (;;) {
      try {
        const children = JSON.parse(readFileSync(file, "utf8")) as { bounded: string; independent: string };
        await untilRunning(root, [children.bounded, children.independent]);
        return { top, ...children };
      } catch (error) {
        if ((error as Error).message.startsWith("still not running")) throw error;
        if (Date.now() > deadline) throw new Error("the spawner never wrote children.json");
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  // A detached sub-task is started once a conductor claimed it; it then still prepares its worktree.
  async function untilRunning(root: string, ids: string[]): Promise<void> {
    const deadline = Date.now() + 60_000;
    while (ids.some((id) => stateOf(root, id).phase !== "running")) {
      if (Date.now() > deadline)
        throw new Error(
          `still not running: ${ids.map((id) => `${id} ${stateOf(root, id).phase}`).join(", ")}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  function setup() {
    return adversaryProject(
      `${ALLOW}\n[agents.spawner]\ndelegates = [{ agent = "loner", mode = "independent" }]\n`,
      {
        spawner: fixture("spawner"),
        hang: join(FIXTURE_BIN, "hang.sh"),
        loner: join(FIXTURE_BIN, "hang.sh"),
      },
    );
  }

  it("through the CLI: the bounded sub-task is cancelled with its parent, the independent one keeps running, and status shows both", async () => {
    const { root, env } = setup();
    const tree = await spawnTree(root, env);
    try {
      expect(stateOf(root, tree.bounded)).toMatchObject({ parent_id: tree.top });
      const cancelled = await runCaesar(["cancel", tree.top, "--json"], {
        cwd: root,
        env,
        timeoutMs: 90_000,
      });
      const out = parseJsonOutput<{ cancelled: boolean; cascaded: { id: string; changed: boolean }[] }>(
        cancelled,
      );
      expect(out.cancelled).toBe(true);
      expect(out.cascaded).toEqual([expect.objectContaining({ id: tree.bounded, changed: true })]);
      expect(stateOf(root, tree.bounded)).toMatchObject({
        phase: "finished",
        outcome: "cancelled",
        cancel_requested: { by: `cli, with its ancestor ${tree.top}` },
      });
      expect(stateOf(root, tree.independent)).toMatchObject({ phase: "running", cancel_requested: null });

      const status = await runCaesar(["status", tree.top], { cwd: root, env: { ...env, NO_COLOR: "1" } });
      expect(status.stdout).toMatch(
        new RegExp(
          `sub-task\\s+${tree.bounded}\\s+hang · bounded · finished · \\W*cancelled · cancelled with its parent`,
        ),
      );
      expect(status.stdout).toMatch(
        new RegExp(
          `sub-task\\s+${tree.independent}\\s+loner · independent \\(keeps running if this one is cancelled\\) · running`,
        ),
      );
      const json = parseJsonOutput<{ children: { task_id: string; bounded: boolean; phase: string }[] }>(
        await runCaesar(["status", tree.top, "--json"], { cwd: root, env }),
      );
      expect(json.children.map((c) => [c.task_id, c.bounded, c.phase])).toEqual([
        [tree.bounded, true, "finished"],
        [tree.independent, false, "running"],
      ]);
    } finally {
      await runCaesar(["cancel", tree.independent], { cwd: root, env, timeoutMs: 90_000 });
    }
  }, 300_000);

  it("through caesar mcp serve: caesar_cancel says what it cascaded to", async () => {
    const { root, env } = setup();
    const tree = await spawnTree(root, env);
    let mcp: CaesarMcp | undefined;
    try {
      mcp = await connectCaesar(["mcp", "serve"], {
        cwd: root,
        env: { CAESAR_BIN, XDG_CONFIG_HOME: env.XDG_CONFIG_HOME! },
      });
      const result = dataOf<{ cancelled: boolean; cascaded: { id: string }[] }>(
        await mcp.call("caesar_cancel", { task_id: tree.top }),
      );
      expect(result.cancelled).toBe(true);
      expect(result.cascaded.map((c) => c.id)).toEqual([tree.bounded]);
      expect(stateOf(root, tree.independent).phase).toBe("running");
    } finally {
      await mcp?.close();
      await runCaesar(["cancel", tree.independent], { cwd: root, env, timeoutMs: 90_000 });
    }
  }, 300_000);
});
