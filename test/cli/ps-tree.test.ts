import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { TaskTreeNode } from "../../src/engine/follow/task-tree.js";
import { CAESAR_BIN, parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { FIXTURE_BIN, makeRepo, taskRecordDir, writeFiles } from "../helpers/repo.js";

const DELEGATOR = join(FIXTURE_BIN, "delegator.mjs");

describe("the delegation tree in the terminal", () => {
  it("`caesar ps --tree` draws every task under the one that delegated it; `caesar status` shows the tree it belongs to", async () => {
    const root = makeRepo({ "README.md": "# tree\n" });
    const agents = ["planner", "worker", "helper"]
      .map((id) => `[[agent]]\nid = "${id}"\nbin = "${DELEGATOR}"\n`)
      .join("\n");
    writeFiles(root, {
      ".caesar/config.toml": `[risk_profiles.default]\ndelegation_policy = { mode = "allow" }\n\n${agents}`,
    });
    const planner = {
      name: "planner",
      usage: { input_tokens: 900, output_tokens: 300, cost_usd: 0.0123 },
      calls: [
        {
          agent: "worker",
          flags: ["--mode", "read-only"],
          objective: { name: "worker", calls: [{ agent: "helper", objective: { name: "deep", calls: [] } }] },
        },
        { agent: "helper", flags: ["--mode", "read-only"], objective: { name: "beside", calls: [] } },
      ],
    };
    const unrelated = await runCaesar(
      ["run", "--json", "--agent", "helper", JSON.stringify({ name: "alone", calls: [] })],
      {
        cwd: root,
        env: { CAESAR_BIN },
      },
    );
    expect(unrelated.code, unrelated.stderr).toBe(0);
    const run = await runCaesar(["run", "--json", "--agent", "planner", JSON.stringify(planner)], {
      cwd: root,
      env: { CAESAR_BIN },
      timeoutMs: 120_000,
    });
    expect(run.code, run.stderr).toBe(0);
    const top = parseJsonOutput<{ task_id: string }>(run).task_id;
    const alone = parseJsonOutput<{ task_id: string }>(unrelated).task_id;
    const details = (id: string) =>
      JSON.parse(
        JSON.parse(readFileSync(join(taskRecordDir(root, id), "state.json"), "utf8")).report.details,
      ) as {
        task_id: string;
      }[];
    const [worker, beside] = details(top).map((call) => call.task_id) as [string, string];
    const [deep] = details(worker).map((call) => call.task_id) as [string];

    const json = parseJsonOutput<{ trees: TaskTreeNode[] }>(
      await runCaesar(["ps", "--tree", "--json"], { cwd: root }),
    );
    const shape = (node: TaskTreeNode): unknown => ({ id: node.id, children: node.children.map(shape) });
    expect(json.trees.map(shape)).toEqual([
      { id: alone, children: [] },
      {
        id: top,
        children: [
          { id: worker, children: [{ id: deep, children: [] }] },
          { id: beside, children: [] },
        ],
      },
    ]);
    expect(json.trees[1]).toMatchObject({
      agent: "planner",
      cost_usd: 0.0123,
      input_tokens: 900,
      report_status: "success",
    });

    const text = await runCaesar(["ps", "--tree"], { cwd: root, env: { LC_ALL: "C.UTF-8" } });
    expect(text.code, text.stderr).toBe(0);
    const lines = text.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(new RegExp(`^${alone}  success  helper  `));
    expect(lines[1]).toMatch(
      new RegExp(`^${top}  success  planner  .*\\$0\\.0123 1\\.2k tok  \\{"name":"planner"`),
    );
    expect(lines[2]).toMatch(new RegExp(`^├─ ${worker}  success  worker  `));
    expect(lines[3]).toMatch(new RegExp(`^│  └─ ${deep}  success  helper  `));
    expect(lines[4]).toMatch(new RegExp(`^└─ ${beside}  success  helper  `));
    // Outside UTF-8 locales, ASCII branches.
    const ascii = await runCaesar(["ps", "--tree"], { cwd: root, env: { LC_ALL: "C", LANG: "C" } });
    expect(ascii.stdout).toContain(`|  \`- ${deep}`);

    // `caesar status` of a task deep in the tree: the whole tree, the task pointed at.
    const status = await runCaesar(["status", deep], { cwd: root, env: { LC_ALL: "C.UTF-8" } });
    expect(status.stdout).toContain("tree");
    expect(status.stdout).toContain(`  ${top}  success  planner`);
    expect(status.stdout).toContain(`│  └─ ${deep} ←  success  helper`);
    const statusJson = parseJsonOutput<{ tree: TaskTreeNode }>(
      await runCaesar(["status", deep, "--json"], { cwd: root }),
    );
    expect(statusJson.tree.id).toBe(top);
  });
});
