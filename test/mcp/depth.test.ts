import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CAESAR_BIN, parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { connectCaesar, dataOf } from "../helpers/mcp.js";
import { makeRepo, taskDir, writeConfig } from "../helpers/repo.js";

/**
 * Depth as the delegation reference numbers it: the main agent is 0, its first delegate 1, and
 * `max_depth = 1` is one hop — seen where an agent sees it (CAESAR_DEPTH, task.json) and where a
 * delegating agent sees it (the MCP tool's answer, a nested refusal).
 */
const ALLOW = '[risk_profiles.default]\ndelegation_policy = { mode = "allow" }\n';

describe("depth numbering", () => {
  it("a task the main agent delegates over MCP is depth 1: in the answer, task.json and CAESAR_DEPTH", async () => {
    const root = makeRepo({ "README.md": "# demo\n" });
    writeConfig(root, "", ["env-dump"]);
    const mcp = await connectCaesar(["mcp", "serve"], { cwd: root });
    try {
      const data = dataOf<{ task_id: string; depth: number; result: { depth: number } }>(
        await mcp.call("caesar_delegate", { objective: "Dump", agent: "env-dump", wait: true }),
      );
      expect(data.depth).toBe(1);
      expect(data.result.depth).toBe(1);
      const dir = taskDir(root, data.task_id);
      expect(JSON.parse(readFileSync(join(dir, "task.json"), "utf8")).depth).toBe(1);
      expect(readFileSync(join(dir, "env.txt"), "utf8")).toContain("CAESAR_DEPTH=1\n");
    } finally {
      await mcp.close();
    }
  });

  it("max_depth = 1 is one hop: the main agent's task may not delegate further; 2 lets it, once", async () => {
    const run = async (maxDepth: number) => {
      const root = makeRepo({ "README.md": "# demo\n" });
      writeConfig(root, `[policy]\nmax_depth = ${maxDepth}\n${ALLOW}`, ["nested", "env-dump"]);
      const result = await runCaesar(["run", "--json", "--agent", "nested", "delegate"], {
        cwd: root,
        env: { CAESAR_BIN, CHILD_AGENT: "env-dump" },
        timeoutMs: 120_000,
      });
      expect(result.code, result.stderr).toBe(0);
      const dir = taskDir(root, parseJsonOutput<{ task_id: string }>(result).task_id);
      return {
        rc: readFileSync(join(dir, "child.rc"), "utf8").trim(),
        child: readFileSync(join(dir, "child.json"), "utf8"),
      };
    };
    const one = await run(1);
    expect(one.rc).not.toBe("0");
    expect(one.child).toContain("Delegation depth limit reached (1/1).");
    const two = await run(2);
    expect(two.rc).toBe("0");
    expect(JSON.parse(two.child).state.depth).toBe(2);
  });

  it("refuses max_depth = 0, saying what the number now counts", async () => {
    const root = makeRepo({ "README.md": "# demo\n" });
    writeConfig(root, "[policy]\nmax_depth = 0\n", ["conformant"]);
    const result = await runCaesar(["run", "--json", "--agent", "conformant", "x"], { cwd: root });
    expect(result.code).not.toBe(0);
    expect(result.stdout + result.stderr).toContain("max_depth counts hops from the main agent (depth 0)");
  });
});
