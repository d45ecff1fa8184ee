import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CaesarMcp, connectCaesar, dataOf, resultOf, textOf } from "../helpers/mcp.js";
import { FIXTURE_BIN, git, makeRepo, writeConfig, writeFiles } from "../helpers/repo.js";

interface TaskView {
  task_id: string;
  agent: string;
  phase: string;
  outcome: string | null;
  open_questions: { id: string; question: string; options?: string[] }[];
  report: {
    status: string;
    summary: string;
    report_source: string;
    changes_verified_by: string;
    changes: { path: string; action: string }[];
  } | null;
}
interface AwaitResult {
  status: "complete" | "timeout";
  completed: number;
  pending: string[];
  missing: string[];
  failed: string[];
  results: TaskView[];
}

const READ_ONLY = [
  "caesar_await",
  "caesar_diff",
  "caesar_list_agents",
  "caesar_list_roles",
  "caesar_logs",
  "caesar_status",
];

function project(): string {
  const root = makeRepo({ "README.md": "# demo\n" });
  writeConfig(
    root,
    [
      `[[agent]]\nid = "asker"\nbin = "${join(FIXTURE_BIN, "channel-asker.mjs")}"\nargs = ["{{prompt}}"]\nenv = { ASKER_INVALID_FIRST = "1" }\n`,
      // Sleeps, so the session that started it is gone long before it reports.
      `[[agent]]\nid = "slow"\nbin = "/bin/sh"\nargs = ["-c", "sleep 2; printf '%s' '{\\"protocol\\":\\"caesar.report/v1\\",\\"status\\":\\"success\\",\\"summary\\":\\"slow but done\\"}' > \\"$CAESAR_REPORT_PATH\\"", "{{prompt}}"]\n`,
    ].join("\n"),
    ["conformant", "writer"],
  );
  return root;
}

describe("caesar mcp serve, driven by the MCP SDK client over stdio", () => {
  let root: string;
  let mcp: CaesarMcp;
  beforeAll(async () => {
    root = project();
    mcp = await connectCaesar(["mcp", "serve"], { cwd: root });
  });
  afterAll(async () => {
    await mcp?.close();
  });

  it("lists its tools, the six that change none of the user's files marked read-only", async () => {
    const { tools } = await mcp.client.listTools();
    const chat = tools.filter((tool) => tool.name.startsWith("caesar_chat_")).map((tool) => tool.name);
    expect(chat.sort()).toEqual([
      "caesar_chat_channels",
      "caesar_chat_claim",
      "caesar_chat_post",
      "caesar_chat_read",
      "caesar_chat_task",
      "caesar_chat_wait",
    ]);
    const own = tools.filter((tool) => !tool.name.startsWith("caesar_chat_"));
    const names = own.map((tool) => tool.name).sort();
    expect(names).toEqual(
      [
        "caesar_answer",
        "caesar_apply",
        "caesar_await",
        "caesar_cancel",
        "caesar_delegate",
        "caesar_diff",
        "caesar_fanout",
        "caesar_list_agents",
        "caesar_list_roles",
        "caesar_logs",
        "caesar_race",
        "caesar_status",
      ].sort(),
    );
    const readOnly = own.filter((tool) => tool.annotations?.readOnlyHint === true).map((tool) => tool.name);
    expect(readOnly.sort()).toEqual(READ_ONLY);
    for (const tool of own) expect(tool.annotations?.readOnlyHint, tool.name).toBeTypeOf("boolean");
    for (const tool of tools) expect(tool.description?.length ?? 0).toBeGreaterThan(80);
    const awaitTool = tools.find((tool) => tool.name === "caesar_await")!;
    const properties = awaitTool.inputSchema.properties as Record<
      string,
      { maxItems?: number; maximum?: number }
    >;
    expect(properties.task_ids!.maxItems).toBe(128);
    // More than the 120000 a call waits is accepted and clamped (the result says so), not refused.
    expect(properties.timeout_ms!.maximum ?? Number.POSITIVE_INFINITY).toBeGreaterThan(120000);
    expect(awaitTool.description).toContain("clamped");
  });

  it("delegates three tasks, awaits them partially, answers the channel's question, awaits them whole, diffs and applies one", async () => {
    const started = await Promise.all([
      mcp.call("caesar_delegate", { objective: "Write out.txt", agent: "writer" }),
      mcp.call("caesar_delegate", { objective: "Handle it", agent: "conformant" }),
      mcp.call("caesar_delegate", {
        objective: "Ask which greeting to write, then write it",
        agent: "asker",
        channel: true,
        acceptance_criteria: ["answer.txt holds the greeting"],
      }),
    ]);
    const [writer, conformant, asker] = started.map(
      (result) => dataOf<{ task_id: string; channel: boolean }>(result).task_id,
    );
    expect(dataOf<{ channel: boolean }>(started[2]!).channel).toBe(true);
    const ids = [writer!, conformant!, asker!];

    // A short wait: the asker cannot finish before its question is answered.
    const partialCall = await mcp.call("caesar_await", { task_ids: ids, timeout_ms: 500 });
    // Like the seed's await_sessions: not every task finished well, so the call is an error, with its result.
    expect(partialCall.isError).toBe(true);
    expect(textOf(partialCall)).toContain("still pending or missing");
    const partial = resultOf<AwaitResult>(partialCall);
    expect(partial.status).toBe("timeout");
    expect(partial.pending).toContain(asker);
    expect(partial.missing).toEqual([]);
    expect(partial.results.map((view) => view.task_id)).toEqual(ids);

    // Wait until its question shows up among the pending task's open questions.
    let question: TaskView["open_questions"][number] | undefined;
    const until = Date.now() + 90_000;
    while (!question && Date.now() < until) {
      const look = resultOf<AwaitResult>(
        await mcp.call("caesar_await", { task_ids: [asker], timeout_ms: 2_000 }),
      );
      question = look.results[0]?.open_questions[0];
    }
    expect(question, "the asker's question never appeared").toBeDefined();
    expect(question!.question).toBe("Which greeting should I write?");
    expect(question!.options).toEqual(["hello", "bonjour"]);

    const answered = await mcp.call("caesar_answer", {
      task_id: asker,
      question_id: question!.id,
      answer: "bonjour",
    });
    expect(answered.isError).toBeFalsy();
    // Only the first answer counts: a second fails, explicitly.
    const again = await mcp.call("caesar_answer", {
      task_id: asker,
      question_id: question!.id,
      answer: "hello",
    });
    expect(again.isError).toBe(true);
    expect(textOf(again)).toContain("already answered");

    const whole = dataOf<AwaitResult>(await mcp.call("caesar_await", { task_ids: ids, timeout_ms: 120_000 }));
    expect(whole.status).toBe("complete");
    expect(whole.pending).toEqual([]);
    expect(whole.failed).toEqual([]);
    expect(whole.completed).toBe(3);
    const byId = new Map(whole.results.map((view) => [view.task_id, view]));
    const askerView = byId.get(asker!)!;
    expect(askerView.report!.report_source).toBe("channel");
    expect(askerView.report!.summary).toBe("wrote the answer: bonjour");
    expect(askerView.report!.changes_verified_by).toBe("git");
    expect(askerView.report!.changes).toEqual([{ path: "answer.txt", action: "added" }]);
    expect(askerView.open_questions).toEqual([]);
    expect(byId.get(writer!)!.report!.report_source).toBe("file");

    // The dialogue is in the event stream.
    const logs = dataOf<{ events: { type: string; question_id?: string; answer?: string }[] }>(
      await mcp.call("caesar_logs", { task_id: asker }),
    );
    const types = logs.events.map((event) => event.type);
    expect(types).toContain("progress");
    expect(logs.events.find((event) => event.type === "question")?.question_id).toBe(question!.id);
    expect(logs.events.find((event) => event.type === "answer")?.answer).toBe("bonjour");
    // The channel dropped the key its agent passed it, and said so (names only).
    const raw = dataOf<{ raw: string }>(await mcp.call("caesar_logs", { task_id: asker, raw: true }));
    expect(raw.raw).toContain("ANTHROPIC_API_KEY");
    expect(raw.raw).not.toContain("sk-fixture-not-a-real-key");
    // Its first report was refused with the problems, and it resubmitted.
    expect(raw.raw).toMatch(/refused \(isError=true\): .*status/);

    const diff = dataOf<{ changes: { path: string }[]; patch: string }>(
      await mcp.call("caesar_diff", { task_id: asker }),
    );
    expect(diff.changes.map((change) => change.path)).toEqual(["answer.txt"]);
    expect(diff.patch).toContain("+bonjour");
    expect(existsSync(join(root, "answer.txt"))).toBe(false);

    const applied = dataOf<{ files: string[] }>(await mcp.call("caesar_apply", { task_id: asker }));
    expect(applied.files).toEqual(["answer.txt"]);
    expect(readFileSync(join(root, "answer.txt"), "utf8")).toBe("bonjour\n");
    expect(git(root, "diff", "--cached", "--name-only")).toBe("answer.txt");
    const twice = await mcp.call("caesar_apply", { task_id: asker });
    expect(twice.isError).toBe(true);
    expect(textOf(twice)).toContain("already applied");

    const status = dataOf<TaskView & { applied: boolean }>(
      await mcp.call("caesar_status", { task_id: asker }),
    );
    expect(status.applied).toBe(true);
    const listed = dataOf<{ tasks: { task_id: string }[] }>(await mcp.call("caesar_status"));
    expect(listed.tasks.map((task) => task.task_id).sort()).toEqual([...ids].sort());
  });

  it("races two agents on one objective and compares them side by side", async () => {
    writeFiles(root, { "src/a.txt": "a\n" });
    git(root, "add", ".");
    git(root, "commit", "--quiet", "-m", "more");
    const race = dataOf<{
      status: string;
      task_ids: string[];
      comparison: {
        agent: string;
        status: string | null;
        diff: { files: number; insertions: number } | null;
        duration_ms: number | null;
        criteria: { listed: string[]; met: boolean | null };
      }[];
    }>(
      await mcp.call("caesar_race", {
        objective: "Write the file",
        agents: ["writer", "conformant"],
        acceptance_criteria: ["a file is written"],
        timeout_ms: 120_000,
      }),
    );
    expect(race.status).toBe("complete");
    expect(race.comparison.map((row) => row.agent)).toEqual(["writer", "conformant"]);
    const [writerRow, conformantRow] = race.comparison;
    expect(writerRow!.diff).toEqual({ files: 1, insertions: 1, deletions: 0, binary: 0 });
    expect(conformantRow!.diff).toEqual({ files: 0, insertions: 0, deletions: 0, binary: 0 });
    expect(writerRow!.criteria).toEqual({ listed: ["a file is written"], met: true, failed_commands: [] });
    expect(writerRow!.duration_ms).not.toBeNull();

    const again = dataOf<{ task_ids: string[]; comparison: unknown[] }>(
      await mcp.call("caesar_race", { task_ids: race.task_ids, timeout_ms: 0 }),
    );
    expect(again.task_ids).toEqual(race.task_ids);
    expect(again.comparison).toHaveLength(2);
  });

  it("lists agents and roles", async () => {
    const agents = dataOf<{ agents: { id: string; installed: boolean; allowed: boolean }[] }>(
      await mcp.call("caesar_list_agents"),
    );
    const asker = agents.agents.find((agent) => agent.id === "asker");
    expect(asker).toMatchObject({ installed: true, allowed: true });
    expect(agents.agents.map((agent) => agent.id)).toContain("reference");
    const roles = dataOf<{ roles: { name: string }[] }>(await mcp.call("caesar_list_roles"));
    expect(Array.isArray(roles.roles)).toBe(true);
  });

  it("never orphans a task when the MCP session ends: it finishes under its own conductor", async () => {
    const first = await connectCaesar(["mcp", "serve"], { cwd: root });
    const { task_id: id } = dataOf<{ task_id: string }>(
      await first.call("caesar_delegate", { objective: "Take a moment, then report", agent: "slow" }),
    );
    await first.close();
    const second = await connectCaesar(["mcp", "serve"], { cwd: root });
    try {
      const done = dataOf<AwaitResult>(
        await second.call("caesar_await", { task_ids: [id], timeout_ms: 120_000 }),
      );
      expect(done.status).toBe("complete");
      expect(done.results[0]!.outcome).toBe("succeeded");
      expect(done.results[0]!.report!.summary).toBe("slow but done");
    } finally {
      await second.close();
    }
  });

  it("sends progress notifications while caesar_await waits, when the client asks for them", async () => {
    const quick = await connectCaesar(["mcp", "serve"], {
      cwd: root,
      env: { CAESAR_MCP_PROGRESS_MS: "100" },
    });
    try {
      const { task_id: id } = dataOf<{ task_id: string }>(
        await quick.call("caesar_delegate", { objective: "Take a moment, then report", agent: "slow" }),
      );
      const progress: { progress: number; message?: string }[] = [];
      const result = await quick.client.callTool(
        { name: "caesar_await", arguments: { task_ids: [id], timeout_ms: 120_000 } },
        undefined,
        {
          timeout: 150_000,
          onprogress: (notification) => progress.push(notification),
        },
      );
      expect(result.isError).toBeFalsy();
      expect((result.structuredContent as { status: string }).status).toBe("complete");
      expect(progress.length).toBeGreaterThan(0);
      expect(progress[0]!.message).toContain("waiting for 1 task(s)");
    } finally {
      await quick.close();
    }
  });
});
