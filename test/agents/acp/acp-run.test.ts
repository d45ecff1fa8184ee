import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CaesarEvent } from "../../../src/protocol/event.js";
import { isProcessAlive } from "../../../src/support/process.js";
import { makeAcpProject } from "../../helpers/acp-fixture.js";
import { parseJsonOutput, runCaesar } from "../../helpers/cli.js";
import { pairingProblems } from "../../helpers/event-checks.js";

interface RunJson {
  task_id: string;
  state: {
    outcome: string;
    worktree: string;
    workspace: string;
    agent_process: { pid: number } | null;
    error: { code: string; message: string } | null;
  };
  report: {
    status: string;
    summary: string;
    report_source: string;
    changes_verified_by: string;
    changes: { path: string; action: string }[];
    findings: { severity: string; title: string; detail?: string }[];
    usage: { input_tokens?: number; output_tokens?: number };
  };
}

const REPORT = (summary: string, changes: { path: string; action: string }[] = []) =>
  `Done.\n\n\`\`\`json caesar:report\n${JSON.stringify({ protocol: "caesar.report/v1", status: "success", summary, changes })}\n\`\`\``;

async function run(root: string, args: string[]) {
  const result = await runCaesar(["run", "--json", "--agent", "fixture-acp", ...args], {
    cwd: root,
    timeoutMs: 90_000,
  });
  return { result, body: parseJsonOutput<RunJson>(result) };
}

function events(root: string, taskId: string): CaesarEvent[] {
  return readFileSync(join(root, ".caesar", "tasks", taskId, "events.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as CaesarEvent);
}

describe('caesar run drives an ACP agent ([[agent]] protocol = "acp")', () => {
  it("a write task: initialize, session/new in the worktree, the brief as prompt; updates become events; the report comes back", async () => {
    const project = makeAcpProject([
      { thought: "Let me look around." },
      {
        plan: [
          { content: "write hello.txt", status: "in_progress" },
          { content: "report", status: "pending" },
        ],
      },
      {
        tool: {
          toolCallId: "t1",
          title: "echo OK > hello.txt",
          kind: "execute",
          rawInput: { command: "echo OK > hello.txt" },
        },
        permission: true,
        shell: "echo OK > hello.txt",
      },
      { write: { path: "{{cwd}}/src/app.txt", content: "v2\n" } },
      {
        tool: {
          toolCallId: "t2",
          title: "Edit notes.md",
          kind: "edit",
          locations: [{ path: "{{cwd}}/notes.md" }],
        },
        permission: true,
        writeLocal: { path: "{{cwd}}/notes.md", content: "notes\n" },
        diff: { path: "{{cwd}}/notes.md", oldText: null, newText: "notes\n" },
      },
      {
        message: REPORT("Wrote hello.txt, notes.md and src/app.txt.", [
          { path: "hello.txt", action: "added" },
        ]),
      },
    ]);
    const { result, body } = await run(project.root, ["create hello.txt"]);
    expect(result.code, result.stderr).toBe(0);
    expect(body.state.outcome).toBe("succeeded");
    expect(body.report.report_source).toBe("fenced");
    expect(body.report.changes_verified_by).toBe("git");
    expect(body.report.changes).toEqual(
      expect.arrayContaining([
        { path: "hello.txt", action: "added" },
        { path: "notes.md", action: "added" },
        { path: "src/app.txt", action: "modified" },
      ]),
    );
    expect(readFileSync(join(body.state.worktree, "src/app.txt"), "utf8")).toBe("v2\n");
    expect(body.report.usage).toMatchObject({ input_tokens: 11, output_tokens: 7 });

    const received = project.received();
    const init = received.find((entry) => entry.event === "initialize") as unknown as {
      params: { clientCapabilities: unknown; clientInfo: { name: string } };
    };
    expect(init.params.clientCapabilities).toMatchObject({
      fs: { readTextFile: true, writeTextFile: true },
      terminal: false,
    });
    expect(init.params.clientInfo.name).toBe("caesar");
    const session = received.find((entry) => entry.event === "session/new") as unknown as {
      params: { cwd: string; mcpServers: unknown[] };
    };
    expect(session.params.cwd).toBe(body.state.worktree);
    expect(session.params.mcpServers).toEqual([]);
    const prompt = received.find((entry) => entry.event === "session/prompt") as unknown as { text: string };
    expect(prompt.text).toContain("Objective: create hello.txt");
    expect(received.filter((entry) => entry.event === "permission").map((entry) => entry.outcome)).toEqual([
      { outcome: "selected", optionId: "once" },
      { outcome: "selected", optionId: "once" },
    ]);

    const log = events(project.root, body.task_id);
    expect(pairingProblems(log)).toEqual([]);
    const types = log.map((event) => event.type);
    expect(types[0]).toBe("started");
    expect(types.at(-1)).toBe("finished");
    expect(log).toContainEqual(expect.objectContaining({ type: "thinking", text: "Let me look around." }));
    expect(log).toContainEqual(
      expect.objectContaining({
        type: "progress",
        pct: 0,
        message: expect.stringContaining("Plan 0/2: write hello.txt"),
      }),
    );
    const shell = log.filter((event) => event.type === "tool_use" && event.id === "t1");
    expect(shell.map((event) => (event as { status: string }).status)).toEqual(["started", "succeeded"]);
    expect(shell[0]).toMatchObject({ tool: "shell", input_summary: "echo OK > hello.txt" });
    expect(log).toContainEqual(
      expect.objectContaining({
        type: "progress",
        message: expect.stringMatching(/^Permission granted: shell echo OK > hello.txt/),
      }),
    );
    expect(log).toContainEqual(expect.objectContaining({ type: "file_changed", path: "src/app.txt" }));
    expect(log).toContainEqual(
      expect.objectContaining({ type: "file_changed", path: "notes.md", action: "added" }),
    );
    // The two chunks of the last message are one message event.
    const messages = log.filter((event) => event.type === "message");
    expect(messages).toHaveLength(1);
    expect((messages[0] as { text: string }).text).toContain("Report (success)");
  });

  it("a read-only task: edits and writing commands are refused by policy, recorded, and nothing changes on disk", async () => {
    const project = makeAcpProject([
      {
        tool: {
          toolCallId: "r1",
          title: "git log",
          kind: "execute",
          rawInput: { command: "git log --oneline" },
        },
        permission: true,
        shell: "git log --oneline",
      },
      {
        tool: {
          toolCallId: "w1",
          title: "echo x > hacked.txt",
          kind: "execute",
          rawInput: { command: "echo x > hacked.txt" },
        },
        permission: true,
        shell: "echo x > hacked.txt",
      },
      {
        tool: {
          toolCallId: "e1",
          title: "Edit README.md",
          kind: "edit",
          locations: [{ path: "{{cwd}}/README.md" }],
        },
        permission: true,
        writeLocal: { path: "{{cwd}}/README.md", content: "defaced\n" },
      },
      { write: { path: "{{cwd}}/src/app.txt", content: "through the client\n" } },
      { message: REPORT("Reviewed.") },
    ]);
    const { body } = await run(project.root, ["--mode", "read-only", "review the code"]);
    expect(body.state.outcome).toBe("succeeded");
    // Without an OS sandbox an ACP agent could write without asking, so a read-only task runs in a worktree
    // (isolation auto): neither it nor the user's own checkout is touched.
    const worktree = body.state.workspace;
    expect(worktree).not.toBe(project.root);
    for (const dir of [worktree, project.root]) {
      expect(existsSync(join(dir, "hacked.txt"))).toBe(false);
      expect(readFileSync(join(dir, "README.md"), "utf8")).toBe("# acp\n");
      expect(readFileSync(join(dir, "src/app.txt"), "utf8")).toBe("v1\n");
    }
    expect(body.report.changes).toEqual([]);

    const outcomes = project.received().filter((entry) => entry.event === "permission");
    expect(
      outcomes.map((entry) => [entry.toolCallId, (entry.outcome as { optionId: string }).optionId]),
    ).toEqual([
      ["r1", "once"],
      ["w1", "no"],
      ["e1", "no"],
    ]);
    const write = project.received().find((entry) => entry.event === "write") as {
      error?: { message: string };
    };
    expect(write.error?.message).toMatch(/outside what this task may write/);

    const titles = body.report.findings.map((finding) => finding.title);
    expect(titles).toEqual(
      expect.arrayContaining([
        "Permission denied: shell",
        "Permission denied: edit",
        "Refused fs/write_text_file outside the workspace",
      ]),
    );
    const log = events(project.root, body.task_id);
    expect(pairingProblems(log)).toEqual([]);
    expect(log).toContainEqual(
      expect.objectContaining({
        type: "progress",
        message: expect.stringMatching(
          /^Permission refused: shell echo x > hacked.txt \(a read-only task runs only commands that provably change nothing\)/,
        ),
      }),
    );
    // The refused call shows as attempted and failed, with caesar's reason.
    const refused = log.filter((event) => event.type === "tool_use" && event.id === "w1");
    expect(refused.map((e) => (e as { status: string }).status)).toEqual(["started", "failed"]);
    expect(refused[1]).toMatchObject({ output_summary: expect.stringContaining("refused by caesar") });
  });

  it("write task: files outside the workspace are refused, symbolic links included, and become findings", async () => {
    const project = makeAcpProject([
      { read: "{{outside}}/secret.txt" },
      { read: "{{cwd}}/escape/secret.txt" },
      { write: { path: "{{outside}}/planted.txt", content: "x" } },
      { write: { path: "{{cwd}}/escape/planted.txt", content: "x" } },
      { read: "{{cwd}}/README.md" },
      { read: "{{cwd}}/missing.txt" },
      {
        tool: {
          toolCallId: "o1",
          title: "Edit outside",
          kind: "edit",
          locations: [{ path: "{{outside}}/x.txt" }],
        },
        permission: true,
      },
      { message: REPORT("Tried.") },
    ]);
    // A link in the repository that points outside it: followed, it is outside.
    symlinkSync(project.outside, join(project.root, "escape"));
    execFileSync("git", ["add", "escape"], { cwd: project.root });
    execFileSync("git", ["-c", "user.email=t@e", "-c", "user.name=t", "commit", "-qm", "link"], {
      cwd: project.root,
    });
    writeFileSync(join(project.outside, "secret.txt"), "secret\n");

    const { body } = await run(project.root, ["try to escape"]);
    const received = project.received();
    const reads = received.filter((entry) => entry.event === "read") as unknown as {
      path: string;
      content?: string;
      error?: { code: number; message: string };
    }[];
    expect(reads[0]!.error?.message).toMatch(/outside what this task may read/);
    expect(reads[1]!.error?.message).toMatch(/outside what this task may read/);
    expect(reads[2]!.content).toBe("# acp\n");
    expect(reads[3]!.error?.code).toBe(-32002); // resource not found: the agent may create it
    const writes = received.filter((entry) => entry.event === "write") as { error?: { message: string } }[];
    expect(writes.every((entry) => /outside what this task may write/.test(entry.error?.message ?? ""))).toBe(
      true,
    );
    expect(existsSync(join(project.outside, "planted.txt"))).toBe(false);
    expect(
      (received.find((entry) => entry.event === "permission") as unknown as { outcome: { optionId: string } })
        .outcome.optionId,
    ).toBe("no");
    const findings = body.report.findings.filter((finding) => /^Refused fs\//.test(finding.title));
    expect(findings.length).toBe(4);
    expect(findings.every((finding) => finding.severity === "high")).toBe(true);
  });

  it("cancel mid-tool: session/cancel is sent, the turn ends cancelled, the process group is ended", async () => {
    const project = makeAcpProject([
      {
        tool: { toolCallId: "s1", title: "long build", kind: "execute", rawInput: { command: "make" } },
        sleep: 120_000,
        // As gemini-cli does: the interrupted command is reported completed. caesar interrupted it: failed.
        cancelledAs: "completed",
      },
      { message: "never" },
    ]);
    const started = runCaesar(["run", "--json", "--agent", "fixture-acp", "build it"], {
      cwd: project.root,
      timeoutMs: 90_000,
    });
    const taskId = await waitFor(() => {
      const tasks = join(project.root, ".caesar", "tasks");
      if (!existsSync(tasks)) return undefined;
      const [id] = readdirSync(tasks);
      if (!id || !existsSync(join(tasks, id, "events.jsonl"))) return undefined;
      return events(project.root, id).some((event) => event.type === "tool_use" && event.status === "started")
        ? id
        : undefined;
    });
    const cancel = await runCaesar(["cancel", taskId], { cwd: project.root, timeoutMs: 60_000 });
    expect(cancel.code, cancel.stderr).toBe(0);
    const result = await started;
    const body = parseJsonOutput<RunJson>(result);
    expect(body.state.outcome).toBe("cancelled");
    expect(project.received().map((entry) => entry.event)).toContain("session/cancel");
    const log = events(project.root, taskId);
    expect(pairingProblems(log)).toEqual([]);
    expect(
      log
        .filter((event) => event.type === "tool_use" && event.id === "s1")
        .map((e) => (e as { status: string }).status),
    ).toEqual(["started", "failed"]);
    expect(readFileSync(join(project.root, ".caesar", "tasks", taskId, "raw.log"), "utf8")).toContain(
      '"stopReason":"cancelled"',
    );
    expect(isAlive(body.state.agent_process!.pid)).toBe(false);
  });

  it("deadline: session/cancel at the deadline, then the group is ended; the outcome says timed out", async () => {
    const project = makeAcpProject([{ sleep: 120_000 }]);
    const { body } = await run(project.root, ["--timeout", "15s", "wait forever"]);
    expect(body.state.outcome).toBe("timed_out");
    const received = project.received().map((entry) => entry.event);
    // A deadline that comes during the prompt cancels it; one that comes before (a very loaded machine
    // starting the agent slowly) has no prompt to cancel, and the group is ended all the same.
    if (received.includes("session/prompt")) expect(received).toContain("session/cancel");
    expect(isAlive(body.state.agent_process!.pid)).toBe(false);
  });

  it("a crash mid-session fails the task with the reason, open tools closed as failed", async () => {
    const project = makeAcpProject([
      {
        tool: { toolCallId: "c1", title: "compile", kind: "execute", rawInput: { command: "cc" } },
        status: "completed",
      },
      {
        tool: { toolCallId: "c2", title: "test", kind: "execute", rawInput: { command: "npm test" } },
        permission: true,
        open: true,
      },
      { crash: 3 },
    ]);
    // c2 is started (allowed) and never ends: the crash closes it.
    const { result, body } = await run(project.root, ["build it"]);
    expect(result.code).toBe(1);
    expect(body.state.outcome).toBe("failed");
    expect(body.report.status).toBe("failed");
    expect(body.report.summary).toMatch(/the agent exited \(exit code 3\) before its turn ended/);
    const log = events(project.root, body.task_id);
    expect(pairingProblems(log)).toEqual([]);
    expect(log).toContainEqual(expect.objectContaining({ type: "tool_use", id: "c2", status: "failed" }));
    expect(log).toContainEqual(expect.objectContaining({ type: "error", code: "agent_error" }));
  });

  it("a tool call the agent never ends before its turn does is closed saying so, not as an exit", async () => {
    const project = makeAcpProject([
      {
        tool: { toolCallId: "c1", title: "test", kind: "execute", rawInput: { command: "npm test" } },
        open: true,
      },
      { message: REPORT("Done.") },
    ]);
    const { result, body } = await run(project.root, ["test it"]);
    expect(result.code, result.stderr).toBe(0);
    expect(body.state.outcome).toBe("succeeded");
    const log = events(project.root, body.task_id);
    expect(pairingProblems(log)).toEqual([]);
    expect(log).toContainEqual(
      expect.objectContaining({
        type: "tool_use",
        id: "c1",
        status: "failed",
        output_summary: "the agent ended its turn without saying how this call ended",
      }),
    );
  });

  it("stop reasons and errors become the outcome: refusal and a prompt error fail, max_tokens succeeds with a finding", async () => {
    const refused = makeAcpProject([{ message: "I will not do that." }, { stop: "refusal" }]);
    const refusal = await run(refused.root, ["do something dubious"]);
    expect(refusal.result.code).toBe(1);
    expect(refusal.body.state.outcome).toBe("failed");
    expect(refusal.body.report.summary).toMatch(/the agent refused to continue/);

    const broken = makeAcpProject([{ error: "model backend unavailable" }]);
    const error = await run(broken.root, ["do something"]);
    expect(error.result.code).toBe(1);
    expect(error.body.state.outcome).toBe("failed");
    expect(error.body.report.summary).toMatch(/model backend unavailable/);

    const limited = makeAcpProject([{ message: REPORT("Partly done.") }, { stop: "max_tokens" }]);
    const limit = await run(limited.root, ["do a lot"]);
    expect(limit.result.code, limit.result.stderr).toBe(0);
    expect(limit.body.state.outcome).toBe("succeeded");
    expect(limit.body.report.findings.map((finding) => finding.title)).toContain(
      "The agent stopped early (max_tokens)",
    );
  }, 180_000); // three tasks in a row, on a shared machine

  it("the return channel rides in session/new's mcpServers: the agent reports through it", async () => {
    const report = {
      protocol: "caesar.report/v1",
      status: "success",
      summary: "Reported through the channel.",
    };
    const project = makeAcpProject([
      { mcp: { tool: "report_progress", arguments: { message: "half way", pct: 50 } } },
      { mcp: { tool: "submit_report", arguments: { report } } },
      { message: "Submitted." },
    ]);
    const { body } = await run(project.root, ["--channel", "report through the channel"]);
    expect(body.report.report_source).toBe("channel");
    expect(body.report.summary).toBe("Reported through the channel.");
    const session = project.received().find((entry) => entry.event === "session/new") as unknown as {
      params: { mcpServers: { name: string; args: string[]; env: { name: string; value: string }[] }[] };
    };
    const server = session.params.mcpServers[0]!;
    expect(server.name).toBe("caesar");
    expect(server.args).toEqual(expect.arrayContaining(["return-channel", "serve", "--task-dir"]));
    expect(server.env.map((pair) => pair.name)).toContain("CAESAR_CHANNEL_TASK_DIR");
    const log = events(project.root, body.task_id);
    expect(log).toContainEqual(expect.objectContaining({ type: "progress", message: "half way", pct: 50 }));
  });

  it("the model goes through the session's model option; one the agent refuses is a finding", async () => {
    const project = makeAcpProject([{ message: REPORT("ok") }]);
    await run(project.root, ["--model", "large", "use the large model"]);
    expect(project.received()).toContainEqual(
      expect.objectContaining({
        event: "session/set_config_option",
        params: expect.objectContaining({ configId: "model", value: "large" }),
      }),
    );
    const { body } = await run(project.root, ["--model", "gigantic", "use a model it lacks"]);
    expect(body.report.findings.map((finding) => finding.title)).toContain("Model gigantic not applied");
  });
});

/** A process that has not ended (a zombie waiting for a slow init to reap it has). */
function isAlive(pid: number): boolean {
  return isProcessAlive(pid);
}

async function waitFor<T>(probe: () => T | undefined, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
