import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CaesarMcp, connectCaesar, dataOf, resultOf, textOf } from "../helpers/mcp.js";
import { makeRepo, writeConfig } from "../helpers/repo.js";

/** Every refusal is a tool error carrying the engine's message — never a crash, never a half-done effect. */
describe("caesar mcp serve refuses, explicitly, and changes nothing", () => {
  let root: string;
  let mcp: CaesarMcp;
  const tasks = () =>
    existsSync(join(root, ".caesar", "tasks")) ? readdirSync(join(root, ".caesar", "tasks")) : [];

  beforeAll(async () => {
    root = makeRepo();
    writeConfig(root, '[policy]\ndenied = ["writer"]\n', ["conformant", "writer", "crash"]);
    mcp = await connectCaesar(["mcp", "serve"], { cwd: root });
  });
  afterAll(async () => {
    await mcp?.close();
  });

  it("validates caesar_await: 1..128 distinct well-formed ids; timeout_ms above 120000 clamped (the seed caps it), and said", async () => {
    const many = Array.from({ length: 129 }, (_, i) => `t_${i.toString(16).padStart(8, "0")}`);
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ task_ids: many }, /no more than 128 task ids/],
      [{ task_ids: ["t_00000001", "t_00000001"] }, /Duplicate task_id "t_00000001"/],
      [{ task_ids: ["../x"] }, /Invalid task_id "\.\.\/x"/],
      [{ task_ids: ["t_00000001"], timeout_ms: 1.5 }, /integer/],
      [{ task_ids: [] }, /at least one task id/],
    ];
    for (const [args, message] of cases) {
      const result = await mcp.call("caesar_await", args);
      expect(result.isError, JSON.stringify(args)).toBe(true);
      expect(textOf(result)).toMatch(message);
    }
    const call = await mcp.call("caesar_await", { task_ids: many.slice(0, 128), timeout_ms: 300_000 });
    expect(textOf(call)).toContain("timeout_ms 300000 was clamped to 120000, the most one call waits");
    expect(resultOf<{ timeout_clamped_from: number }>(call).timeout_clamped_from).toBe(300_000);
    // Missing ids make the call an error (the seed's await_sessions), with the whole result all the same.
    expect(call.isError).toBe(true);
    expect(textOf(call)).toContain("one or more tasks are still pending or missing");
    const ok = resultOf<{ status: string; missing: string[]; results: unknown[] }>(call);
    // Unknown ids are listed as missing; they do not hold the wait.
    expect(ok.missing).toHaveLength(128);
    expect(ok.results).toEqual([]);
    expect(ok.status).toBe("complete");
  });

  it("admits a fan-out all or none: one refused task, and nothing starts", async () => {
    const before = tasks();
    const result = await mcp.call("caesar_fanout", {
      tasks: [
        { objective: "first", agent: "conformant" },
        { objective: "second", agent: "writer" },
        { objective: "third", agent: "no-such-agent" },
      ],
    });
    expect(result.isError).toBe(true);
    const text = textOf(result);
    expect(text).toContain("Nothing was started: 2 of 3 task(s) refused");
    expect(text).toContain("task 2");
    expect(text).toContain("[policy] denied");
    expect(text).toContain("task 3");
    expect(text).toContain('Unknown agent "no-such-agent"');
    expect(tasks()).toEqual(before);

    const admitted = dataOf<{ started: string[] }>(
      await mcp.call("caesar_fanout", {
        tasks: [
          { objective: "first", agent: "conformant" },
          { objective: "second", agent: "conformant" },
        ],
      }),
    );
    expect(admitted.started).toHaveLength(2);
    expect(tasks().sort()).toEqual([...before, ...admitted.started].sort());
    const done = dataOf<{ status: string; completed: number }>(
      await mcp.call("caesar_await", { task_ids: admitted.started, timeout_ms: 120_000 }),
    );
    expect(done).toMatchObject({ status: "complete", completed: 2 });
  });

  it("makes caesar_await an error when a task failed, as the seed's await_sessions, with the whole result", async () => {
    const started = dataOf<{ started: string[] }>(
      await mcp.call("caesar_fanout", {
        tasks: [
          { objective: "fine", agent: "conformant" },
          { objective: "crash", agent: "crash" },
        ],
      }),
    ).started;
    const call = await mcp.call("caesar_await", { task_ids: started, timeout_ms: 120_000 });
    expect(call.isError).toBe(true);
    expect(textOf(call)).toContain("Not all succeeded");
    const result = resultOf<{ status: string; completed: number; failed: string[] }>(call);
    expect(result).toMatchObject({ status: "complete", completed: 1, failed: [started[1]] });
  });

  it("turns policy and lookup refusals into tool errors with the remedy", async () => {
    const before = tasks();
    const denied = await mcp.call("caesar_delegate", { objective: "x", agent: "writer" });
    expect(denied.isError).toBe(true);
    expect(textOf(denied)).toContain("caesar policy allow writer");
    const empty = await mcp.call("caesar_delegate", { objective: "   " });
    expect(empty.isError).toBe(true);
    const badTimeout = await mcp.call("caesar_delegate", {
      objective: "x",
      agent: "conformant",
      timeout: "soon",
    });
    expect(badTimeout.structuredContent).toMatchObject({ error: { code: "invalid_argument" } });
    expect(textOf(badTimeout)).toContain('Invalid argument at timeout: "soon" is not a duration');
    const race = await mcp.call("caesar_race", { objective: "x", agents: ["conformant"] });
    expect(race.isError).toBe(true);
    expect(tasks()).toEqual(before);

    for (const [tool, args] of [
      ["caesar_status", { task_id: "../etc" }],
      ["caesar_logs", { task_id: "t_deadbeef" }],
      ["caesar_diff", { task_id: "t_deadbeef" }],
      ["caesar_cancel", { task_id: "t_deadbeef" }],
      ["caesar_apply", { task_id: "t_deadbeef" }],
      ["caesar_answer", { task_id: "t_deadbeef", question_id: "q_1", answer: "x" }],
    ] as const) {
      const result = await mcp.call(tool, args);
      expect(result.isError, tool).toBe(true);
      expect(textOf(result), tool).toMatch(/Invalid task id|No task t_deadbeef/);
    }
  });

  it("answers only known questions of known tasks, writing nothing otherwise", async () => {
    const [id] = dataOf<{ started: string[] }>(
      await mcp.call("caesar_fanout", { tasks: [{ objective: "quick", agent: "conformant" }] }),
    ).started;
    const unknown = await mcp.call("caesar_answer", { task_id: id, question_id: "q_12345678", answer: "x" });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toContain("has no question q_12345678");
    const traversal = await mcp.call("caesar_answer", { task_id: id, question_id: "../../x", answer: "x" });
    expect(traversal.isError).toBe(true);
    expect(textOf(traversal)).toContain("Invalid question id");
    expect(existsSync(join(root, ".caesar", "tasks", id!, "answers"))).toBe(false);
  });

  it("refuses a parent claimed without its credentials (CAESAR_TASK_ID alone proves nothing), starting nothing", async () => {
    const [parent] = dataOf<{ started: string[] }>(
      await mcp.call("caesar_fanout", { tasks: [{ objective: "parent", agent: "conformant" }] }),
    ).started;
    await mcp.call("caesar_await", { task_ids: [parent], timeout_ms: 120_000 });
    const inside = await connectCaesar(["mcp", "serve"], {
      cwd: root,
      env: { CAESAR_TASK_ID: parent!, CAESAR_AGENT: "conformant", CAESAR_DEPTH: "0" },
    });
    try {
      const before = tasks();
      const refused = await inside.call("caesar_delegate", { objective: "child", agent: "conformant" });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toContain(
        `Nested request refused: ${parent}'s credentials are missing (CAESAR_TASK_TOKEN is not set).`,
      );
      expect(textOf(refused)).toContain("(code: nested_unproven)");
      expect(tasks()).toEqual(before);
    } finally {
      await inside.close();
    }
  });
});
