import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CaesarMcp, connectCaesar, dataOf, resultOf, textOf } from "../helpers/mcp.js";
import { makeRepo, writeConfig } from "../helpers/repo.js";

/**
 * The synchronous form of caesar_delegate and caesar_fanout (`wait: true`), from the delegating agent's
 * side: the official MCP client against the real server, real tasks, real fixture agents. The strings are
 * the delegation reference's: `[Agent '<t>' (<provider>/<model>)]`, `Agent '<t>' failed: …`,
 * `Agent '<t>' timed out after <N>s`, `[Parallel delegation: <N> agents]`, `--- <t> (success=<bool>) ---`.
 */
describe("caesar_delegate and caesar_fanout with wait", () => {
  let root: string;
  let mcp: CaesarMcp;
  beforeAll(async () => {
    root = makeRepo({ "README.md": "# demo\n" });
    // Unsandboxed: a write the agent makes in a read-only task is one test's subject, and caesar's OS
    // sandbox would refuse it itself (test/sandbox/).
    writeConfig(root, '[sandbox]\nmode = "off"\n', ["conformant", "crash", "hang", "writer"]);
    mcp = await connectCaesar(["mcp", "serve"], { cwd: root });
  });
  afterAll(async () => {
    await mcp?.close();
  });

  it("returns the agent's answer under the reference's header, with the task's id and view", async () => {
    const result = await mcp.call("caesar_delegate", {
      objective: "Say hello",
      agent: "conformant",
      model: "m-1",
      wait: true,
    });
    expect(result.isError ?? false).toBe(false);
    expect(textOf(result)).toMatch(/^\[Agent 'conformant' \(conformant\/m-1\)\]\nHandled: Say hello\n/);
    const data = dataOf<{
      task_id: string;
      outcome: { success: boolean; output: string; error: null };
      result: { phase: string };
    }>(result);
    expect(data.outcome.success).toBe(true);
    expect(data.result.phase).toBe("finished");
    expect(data.outcome.output).toContain(`Task ${data.task_id}: report success`);
  });

  it("is an error naming the agent when the task fails, or when it runs out of time", async () => {
    const [failed, late] = await Promise.all([
      mcp.call("caesar_delegate", { objective: "Try", agent: "crash", wait: true }),
      mcp.call("caesar_delegate", { objective: "Wait", agent: "hang", timeout: "2s", wait: true }),
    ]);
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toMatch(/^Agent 'crash' failed: /);
    expect(resultOf<{ outcome: { success: boolean; error: string } }>(failed).outcome).toMatchObject({
      success: false,
      error: expect.stringContaining("exited with code 3"),
    });
    expect(late.isError).toBe(true);
    expect(textOf(late)).toMatch(/^Agent 'hang' timed out after 2s\n/);
  });

  it("is an error when the agent changed files during a read-only task, though it reports success", async () => {
    const result = await mcp.call("caesar_delegate", {
      objective: "Only look",
      agent: "writer",
      mode: "read-only",
      wait: true,
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /^Agent 'writer' failed: it changed 1 file\(s\) during a read-only task \(task t_/,
    );
    expect(resultOf<{ result: { report: { status: string } } }>(result).result.report.status).toBe("success");
  });

  it("takes the agent's own timeout ([agents.<id>] timeout, the reference's per-target one) when the request gives none", async () => {
    const own = makeRepo({ "README.md": "# demo\n" });
    writeConfig(own, '[agents.hang]\ntimeout = "1s"\n', ["hang"]);
    const server = await connectCaesar(["mcp", "serve"], { cwd: own });
    try {
      const late = await server.call("caesar_delegate", { objective: "Wait", agent: "hang", wait: true });
      expect(late.isError).toBe(true);
      expect(textOf(late)).toMatch(/^Agent 'hang' timed out after 1s\n/);
      expect(resultOf<{ timeout_ms: number }>(late).timeout_ms).toBe(1000);
    } finally {
      await server.close();
    }
  });

  it("without wait still answers at once with the id (the asynchronous form is kept)", async () => {
    const result = await mcp.call("caesar_delegate", { objective: "Later", agent: "conformant" });
    expect(textOf(result)).toMatch(/^Started t_/);
    expect(dataOf<{ outcome?: unknown }>(result).outcome).toBeUndefined();
  });

  it("refuses a wait that is not a boolean, starting nothing", async () => {
    const result = await mcp.call("caesar_delegate", { objective: "x", agent: "conformant", wait: "yes" });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/Invalid argument at wait/);
    expect(textOf(result)).toContain("(code: invalid_argument)");
  });

  it("refuses an unknown field listing the tool's own fields, wait among them, as tools/list publishes them", async () => {
    const { tools } = await mcp.client.listTools();
    const published = Object.keys(
      tools.find((tool) => tool.name === "caesar_delegate")!.inputSchema.properties!,
    );
    expect(published).toContain("wait");
    for (const args of [
      { objective: "x", agent: "conformant", bogus: 1 },
      { objective: "x", agent: "conformant", bogus: 1, wait: true },
    ]) {
      const result = await mcp.call("caesar_delegate", args);
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain(`The fields are: ${published.join(", ")}.`);
      expect(textOf(result)).toContain("(code: unknown_field)");
    }
  });

  it("a waited fan-out gives one block per task in order; caesar_await over the ids gives the same", async () => {
    const result = await mcp.call("caesar_fanout", {
      tasks: [
        { objective: "First", agent: "conformant" },
        { objective: "Second", agent: "crash" },
      ],
      wait: true,
    });
    expect(result.isError).toBe(true);
    const text = textOf(result);
    expect(text).toMatch(
      /^\[Parallel delegation: 2 agents\]\n\n--- conformant \(success=true\) ---\n\[Agent 'conformant' \(conformant\/default\)\]\nHandled: First\n/,
    );
    expect(text).toMatch(
      /\n\n--- crash \(success=false\) ---\nError: Agent 'crash' failed: Agent "crash" exited with code 3[\s\S]*\n\nOne or more parallel agents failed\n/,
    );
    const { started } = resultOf<{ started: string[] }>(result);
    const awaited = await mcp.call("caesar_await", { task_ids: started, timeout_ms: 0 });
    expect(textOf(awaited)).toContain(
      "[Parallel delegation: 2 agents]\n\n--- conformant (success=true) ---\n",
    );
    expect(textOf(awaited)).toContain("--- crash (success=false) ---\nError: Agent 'crash' failed: ");
    // One id: no blocks (its result is the view itself).
    const one = await mcp.call("caesar_await", { task_ids: [started[0]!], timeout_ms: 0 });
    expect(textOf(one)).not.toContain("[Parallel delegation");
  });
});
