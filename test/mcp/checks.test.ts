import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CaesarMcp, connectCaesar, dataOf, resultOf, textOf } from "../helpers/mcp.js";
import { makeRepo, writeConfig } from "../helpers/repo.js";

interface View {
  task_id: string;
  phase: string;
  checks: { total: number; passed: number; state: string };
  attempts: number;
  report: {
    status: string;
    checks: { command: string; passed: boolean }[];
    attempts: { how: string }[];
  } | null;
}

describe("checks over MCP (caesar mcp serve, the SDK's client)", () => {
  let mcp: CaesarMcp;
  beforeAll(async () => {
    const root = makeRepo({ "test.sh": "grep -q fixed value.txt\n", "value.txt": "broken\n" });
    writeConfig(root, "", ["writer", "fixer"]);
    mcp = await connectCaesar(["mcp", "serve"], { cwd: root });
  });
  afterAll(async () => {
    await mcp?.close();
  });

  it("caesar_delegate with checks and attempts; caesar_await shows the verdict and counts a failing check as failed", async () => {
    const fixed = dataOf<{ task_id: string; checks: string[]; attempts: number }>(
      await mcp.call("caesar_delegate", {
        objective: "fix value.txt",
        agent: "fixer",
        checks: ["sh test.sh"],
        attempts: 2,
      }),
    );
    expect(fixed).toMatchObject({ checks: ["sh test.sh"], attempts: 2 });
    const broken = dataOf<{ task_id: string }>(
      await mcp.call("caesar_delegate", {
        objective: "write out.txt",
        agent: "writer",
        acceptance_criteria: ["run: sh test.sh"],
      }),
    );
    const call = await mcp.call("caesar_await", {
      task_ids: [fixed.task_id, broken.task_id],
      timeout_ms: 120_000,
    });
    // A failing check fails the task, and caesar_await is then an error — with its whole result.
    expect(call.isError).toBe(true);
    const waited = resultOf<{ status: string; completed: number; failed: string[]; results: View[] }>(call);
    expect(waited.status).toBe("complete");
    const [first, second] = waited.results;
    expect(first).toMatchObject({ checks: { total: 1, passed: 1, state: "passed" }, attempts: 2 });
    expect(first!.report!.attempts.map((attempt) => attempt.how)).toEqual(["first", "fresh"]);
    expect(second).toMatchObject({ checks: { total: 1, passed: 0, state: "failed" }, attempts: 1 });
    expect(second!.report!.status).toBe("partial");
    // The process succeeded and the agent said success, but its check failed: not a success.
    expect(waited.failed).toEqual([broken.task_id]);
    expect(waited.completed).toBe(1);
  });

  it("caesar_fanout refuses every task when one check is not a command: nothing starts", async () => {
    const result = await mcp.call("caesar_fanout", {
      tasks: [
        { objective: "a", agent: "writer", checks: ["true"] },
        { objective: "b", agent: "writer", checks: ["definitely-not-installed"] },
      ],
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("Nothing was started");
    expect(textOf(result)).toContain("`definitely-not-installed` was not found on PATH");
  });
});
