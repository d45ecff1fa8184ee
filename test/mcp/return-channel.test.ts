import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { type CaesarMcp, connectCaesar, dataOf, textOf } from "../helpers/mcp.js";
import { FIXTURE_BIN, makeRepo, readJson, tempDir, writeConfig } from "../helpers/repo.js";

/** A task directory as the conductor leaves it while the agent runs: task.json, state.json, events. */
function makeTaskDir(deadlineInMs: number, id = "t_0c4a77e1"): { root: string; dir: string; id: string } {
  const root = makeRepo();
  const dir = join(root, ".caesar", "tasks", id);
  mkdirSync(dir, { recursive: true });
  const now = new Date();
  const deadline = new Date(now.getTime() + deadlineInMs).toISOString();
  writeFileSync(
    join(dir, "task.json"),
    JSON.stringify({
      protocol: "caesar.task/v1",
      id,
      created_at: now.toISOString(),
      agent: "asker",
      objective: "Ask, then report",
      mode: "write",
      isolation: "inplace",
      workspace: root,
      deadline_ms: deadlineInMs,
      report_path: join(dir, "report.json"),
      events_path: join(dir, "events.jsonl"),
      channel: null,
    }),
  );
  writeFileSync(
    join(dir, "state.json"),
    JSON.stringify({
      version: 1,
      id,
      phase: "running",
      created_at: now.toISOString(),
      updated_at: now.toISOString(),
      agent: "asker",
      objective: "Ask, then report",
      mode: "write",
      isolation: "inplace",
      root,
      workspace: root,
      started_at: now.toISOString(),
      deadline_at: deadline,
    }),
  );
  return { root, dir, id };
}

const CREDENTIALS = {
  ANTHROPIC_API_KEY: "sk-ant-test-value",
  OPENAI_API_KEY: "sk-openai-test-value",
  GEMINI_API_KEY: "gemini-test-value",
  GOOGLE_API_KEY: "google-test-value",
  COPILOT_PROVIDER_API_KEY: "copilot-test-value",
  OPENCODE_CONFIG_CONTENT: '{"provider":{"x":{"options":{"apiKey":"opencode-test-value"}}}}',
};

describe("caesar return-channel serve, over stdio with the MCP SDK client", () => {
  let channel: CaesarMcp | undefined;
  afterEach(async () => {
    await channel?.close();
    channel = undefined;
  });

  it("serves get_task and report_progress, drops inherited credentials, and ignores an inherited CAESAR_TASK_DIR", async () => {
    const { root, dir, id } = makeTaskDir(600_000);
    const other = makeTaskDir(600_000, "t_00000bad");
    channel = await connectCaesar(["return-channel", "serve", "--task-dir", dir], {
      cwd: root,
      env: { ...CREDENTIALS, CAESAR_TASK_DIR: other.dir, CAESAR_TASK_ID: other.id },
    });
    const { tools } = await channel.client.listTools();
    expect(
      tools
        .map((tool) => tool.name)
        .filter((name) => !name.startsWith("caesar_chat_"))
        .sort(),
    ).toEqual(["ask_orchestrator", "get_task", "report_progress", "submit_report"]);
    const task = dataOf<{ task: { id: string; objective: string }; remaining_ms: number }>(
      await channel.call("get_task"),
    );
    expect(task.task.id).toBe(id);
    expect(task.task.objective).toBe("Ask, then report");
    expect(task.remaining_ms).toBeGreaterThan(0);
    expect(task.remaining_ms).toBeLessThanOrEqual(600_000);

    const progress = await channel.call("report_progress", { message: "half way", pct: 50 });
    expect(progress.isError).toBeFalsy();
    const events = readFileSync(join(dir, "events.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(events).toContainEqual(
      expect.objectContaining({ type: "progress", message: "half way", pct: 50, task_id: id }),
    );
    expect(existsSync(join(other.dir, "events.jsonl"))).toBe(false);
    const bad = await channel.call("report_progress", { message: "x", pct: 150 });
    expect(bad.isError).toBe(true);

    const notice = channel.stderr();
    for (const name of Object.keys(CREDENTIALS)) expect(notice).toContain(name);
    for (const value of Object.values(CREDENTIALS)) expect(notice).not.toContain(value);
  });

  it("ask_orchestrator waits for the answer written by `caesar answer`; a second answer, or one to an unknown question, fails and writes nothing", async () => {
    const { root, dir, id } = makeTaskDir(600_000);
    channel = await connectCaesar(["return-channel", "serve", "--task-dir", dir], { cwd: root });
    const pending = channel.call("ask_orchestrator", {
      question: "Keep the old API?",
      options: ["yes", "no"],
    });

    let questionId: string | undefined;
    const until = Date.now() + 30_000;
    while (!questionId && Date.now() < until) {
      const names = existsSync(join(dir, "questions")) ? readdirSync(join(dir, "questions")) : [];
      questionId = names.find((name) => name.endsWith(".json"))?.slice(0, -5);
      if (!questionId) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(questionId).toBeDefined();
    const question = readJson(join(dir, "questions", `${questionId}.json`));
    expect(question).toMatchObject({
      protocol: "caesar.question/v1",
      id: questionId,
      task_id: id,
      question: "Keep the old API?",
      options: ["yes", "no"],
    });

    const unknown = await runCaesar(["answer", id, "q_00000000", "yes", "--json"], { cwd: root });
    expect(unknown.code).toBe(1);
    expect(parseJsonOutput<{ error: { code: string } }>(unknown).error.code).toBe("unknown_question");
    expect(existsSync(join(dir, "answers", "q_00000000.json"))).toBe(false);

    const open = await runCaesar(["status", id], { cwd: root });
    expect(open.stdout).toContain(`open — caesar answer ${id} ${questionId}`);

    const first = await runCaesar(["answer", id, questionId!, "no, keep it"], { cwd: root });
    expect(first.code, first.stderr).toBe(0);
    const result = dataOf<{ answered: boolean; answer: string; question_id: string }>(await pending);
    expect(result).toMatchObject({ answered: true, answer: "no, keep it", question_id: questionId });

    const second = await runCaesar(["answer", id, questionId!, "yes", "--json"], { cwd: root });
    expect(second.code).toBe(1);
    expect(parseJsonOutput<{ error: { code: string } }>(second).error.code).toBe("already_answered");
    expect(readJson(join(dir, "answers", `${questionId}.json`))).toMatchObject({
      answer: "no, keep it",
      answered_by: "cli",
    });
    const events = readFileSync(join(dir, "events.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(events.filter((event) => event.type === "answer")).toHaveLength(1);
    expect(events.filter((event) => event.type === "question")).toHaveLength(1);
  });

  it("ask_orchestrator never waits beyond the task's deadline, and returns normally without an answer", async () => {
    const { root, dir } = makeTaskDir(1_500);
    channel = await connectCaesar(["return-channel", "serve", "--task-dir", dir], { cwd: root });
    const result = await channel.call("ask_orchestrator", { question: "Anyone there?" });
    expect(result.isError).toBeFalsy();
    const data = dataOf<{
      answered: boolean;
      limited_by: string;
      wait_limit_ms: number;
      question_id: string;
    }>(result);
    expect(data.answered).toBe(false);
    expect(data.limited_by).toBe("deadline");
    // It comes back a quarter of the task's time before the deadline, for the agent to act.
    expect(data.wait_limit_ms).toBeLessThanOrEqual(1_500 - 375);
    expect(textOf(result)).toContain("best judgement");
    // The question stays on record, unanswered.
    expect(existsSync(join(dir, "questions", `${data.question_id}.json`))).toBe(true);
    expect(existsSync(join(dir, "answers", `${data.question_id}.json`))).toBe(false);
  });

  it("caesar run --timeout: an unanswered question comes back while the agent can still act on it", async () => {
    const root = makeRepo();
    writeConfig(
      root,
      `[[agent]]\nid = "asker"\nbin = "${join(FIXTURE_BIN, "channel-asker.mjs")}"\nargs = ["{{prompt}}"]\n`,
    );
    // 16 s: the question comes back 4 s before the deadline (a quarter), and the agent reports in time.
    const result = await runCaesar(
      ["run", "--json", "--channel", "--agent", "asker", "--timeout", "16s", "ask"],
      {
        cwd: root,
        timeoutMs: 90_000,
      },
    );
    const body = parseJsonOutput<{
      task_id: string;
      state: { outcome: string; worktree: string };
      report: { report_source: string; summary: string };
    }>(result);
    expect(body.state.outcome, result.stdout).toBe("succeeded");
    expect(body.report.report_source).toBe("channel");
    expect(body.report.summary).toBe("wrote the answer: no answer");
    expect(readFileSync(join(body.state.worktree, "answer.txt"), "utf8")).toBe("no answer\n");
  });

  it("submit_report refuses an invalid report with its problems and records nothing, then takes a valid one", async () => {
    const { root, dir, id } = makeTaskDir(600_000);
    channel = await connectCaesar(["return-channel", "serve", "--task-dir", dir], { cwd: root });
    const invalid = await channel.call("submit_report", { status: "done", summary: "" });
    expect(invalid.isError).toBe(true);
    expect(textOf(invalid)).toMatch(/status/);
    expect(textOf(invalid)).toMatch(/summary/);
    expect(existsSync(join(dir, "channel-report.json"))).toBe(false);

    const wrongTask = await channel.call("submit_report", {
      status: "success",
      summary: "ok",
      task_id: "t_ffffffff",
    });
    expect(wrongTask.isError).toBe(true);
    expect(existsSync(join(dir, "channel-report.json"))).toBe(false);

    const valid = await channel.call("submit_report", {
      status: "partial",
      summary: "Half of it",
      next_steps: ["the other half"],
    });
    expect(valid.isError, textOf(valid)).toBeFalsy();
    const recorded = readJson(join(dir, "channel-report.json"));
    expect(recorded).toMatchObject({
      protocol: "caesar.report/v1",
      task_id: id,
      status: "partial",
      summary: "Half of it",
      next_steps: ["the other half"],
    });
    const validated = await runCaesar(["protocol", "validate", join(dir, "channel-report.json")], {
      cwd: root,
    });
    expect(validated.code, validated.stdout).toBe(0);
  });

  it("submit_report reads a null field as absent, as strict structured outputs send it", async () => {
    const { root, dir } = makeTaskDir(600_000);
    channel = await connectCaesar(["return-channel", "serve", "--task-dir", dir], { cwd: root });
    const result = await channel.call("submit_report", {
      status: "success",
      summary: "ok",
      details: null,
      usage: null,
      next_steps: null,
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(readJson(join(dir, "channel-report.json"))).toMatchObject({
      details: "",
      usage: {},
      next_steps: [],
    });
  });

  it("refuses to serve anything but a real task directory, and never takes it from CAESAR_TASK_DIR", async () => {
    const { root, dir } = makeTaskDir(600_000);
    const noArgument = await runCaesar(["return-channel", "serve"], {
      cwd: root,
      env: { CAESAR_TASK_DIR: dir },
    });
    expect(noArgument.code).toBe(2);
    expect(noArgument.stderr).toContain("No task directory for the return channel");

    const notATask = await runCaesar(["return-channel", "serve", "--task-dir", tempDir()], { cwd: root });
    expect(notATask.code).toBe(2);
    expect(notATask.stderr).toContain("is not a caesar task directory");

    const fromOwnEnv = await runCaesar(["return-channel", "serve"], {
      cwd: root,
      env: { CAESAR_CHANNEL_TASK_DIR: join(root, ".caesar", "tasks", "t_0c4a77e2") },
    });
    expect(fromOwnEnv.code).toBe(2);
    expect(fromOwnEnv.stderr).toContain("no such directory");

    // Its 0.1 name, `caesar channel serve`, still answers for this release (agent configurations written then).
    const oldName = await runCaesar(["channel", "serve", "--task-dir", tempDir()], { cwd: root });
    expect(oldName.code).toBe(2);
    expect(oldName.stderr).toContain("is not a caesar task directory");
  });

  it("mounts the agent chat: the task's agent posts as <agent>-<task hex> in the project's chat, which caesar mcp serve reads", async () => {
    const { root, dir } = makeTaskDir(600_000);
    const init = await runCaesar(["chat", "init", "coord", "--root", join(root, ".caesar", "chat")], {
      cwd: root,
    });
    expect(init.code, init.stderr).toBe(0);
    channel = await connectCaesar(["return-channel", "serve", "--task-dir", dir], { cwd: root });
    const posted = await channel.call("caesar_chat_post", {
      channel: "coord",
      title: "parser done",
      to: "lead",
    });
    expect(posted.isError, textOf(posted)).toBeFalsy();
    const impostor = await channel.call("caesar_chat_post", { channel: "coord", title: "x", from: "lead" });
    expect(impostor.isError).toBe(true);
    expect(existsSync(join(root, ".caesar", "chat", "coord"))).toBe(true);

    const orchestrator = await connectCaesar(["mcp", "serve"], { cwd: root });
    try {
      const read = dataOf<{ messages: { from: string; title: string }[] }>(
        await orchestrator.call("caesar_chat_read", { channel: "coord", as: "lead" }),
      );
      expect(read.messages).toEqual([
        expect.objectContaining({ from: "asker-0c4a77e1", title: "parser done" }),
      ]);
    } finally {
      await orchestrator.close();
    }
  });
});
