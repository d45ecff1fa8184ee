import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { messages, startEditor } from "../helpers/acp-editor.js";
import { makeAcpProject } from "../helpers/acp-fixture.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { git } from "../helpers/repo.js";

const REPORT = (summary: string) =>
  `Done.\n\n\`\`\`json caesar:report\n${JSON.stringify({ protocol: "caesar.report/v1", status: "success", summary })}\n\`\`\``;

/** Consecutive repeats collapsed: a status sent twice in a row is one state. */
function dedupe<T>(values: T[]): T[] {
  return values.filter((value, index) => index === 0 || values[index - 1] !== value);
}

function taskIds(root: string): string[] {
  const tasks = join(root, ".caesar", "tasks");
  return existsSync(tasks) ? readdirSync(tasks) : [];
}

function stateOf(root: string, id: string): { phase: string; outcome: string | null; mode: string } {
  return JSON.parse(readFileSync(join(root, ".caesar", "tasks", id, "state.json"), "utf8"));
}

async function initialize(agent: acp.ClientContext, cwd: string) {
  const init = await agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: "test-editor", version: "1.0.0" },
  });
  const session = await agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  return { init, session };
}

describe("caesar acp: caesar as an ACP agent, driven by the SDK's own client as an editor would", () => {
  it("a prompt becomes a task: streamed tool calls and plan, a relayed permission, the verified diff, the report, the change applied", async () => {
    const project = makeAcpProject([
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
      { message: REPORT("Created hello.txt.") },
    ]);
    const editor = startEditor({ cwd: project.root, args: ["--agent", "fixture-acp"] });
    try {
      const { init, session } = await initialize(editor.agent, project.root);
      expect(init.agentInfo?.name).toBe("caesar");
      // The delegate is fixed by --agent: only the mode and the model are offered.
      expect(session.configOptions?.map((option) => option.id)).toEqual(["mode", "model"]);
      const result = await editor.agent.request(acp.methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: "create hello.txt containing OK" }],
      });
      expect(result.stopReason).toBe("end_turn");
      const { updates, permissions } = editor.record;

      // The delegate's permission request, relayed to the editor's user, then the offer to apply.
      expect(permissions.map((request) => request.toolCall.title)).toEqual([
        "echo OK > hello.txt",
        expect.stringMatching(/^Apply 1 file\(s\) from t_\w+ to your working tree$/),
      ]);
      expect(updates.some((update) => update.sessionUpdate === "plan")).toBe(true);
      const shell = updates.filter((update) => "toolCallId" in update && update.toolCallId.endsWith(":t1"));
      // Announced once; shown pending while it waits for the user's answer, then running, then done.
      expect(shell.filter((update) => update.sessionUpdate === "tool_call")).toHaveLength(1);
      const statuses = shell.map((update) => ("status" in update ? update.status : undefined));
      // Running once allowed (unless it had already ended when the answer was seen), never after its end.
      expect([
        ["pending", "in_progress", "completed"],
        ["pending", "completed"],
      ]).toContainEqual(dedupe(statuses.slice(statuses.lastIndexOf("pending"))));
      expect(shell.find((update) => update.sessionUpdate === "tool_call")).toMatchObject({
        kind: "execute",
        title: expect.stringContaining("echo OK > hello.txt"),
      });
      const diff = updates.find((update) => "toolCallId" in update && update.toolCallId.endsWith(":diff"));
      expect(diff).toMatchObject({
        sessionUpdate: "tool_call",
        kind: "edit",
        content: [{ type: "diff", path: join(project.root, "hello.txt"), oldText: null, newText: "OK\n" }],
      });
      const answer = messages(editor.record);
      expect(answer).toContain("Created hello.txt.");
      expect(answer).toMatch(/Applied: 1 file\(s\) staged/);
      // What the delegate spent (its prompt's usage), told in the answer.
      expect(answer).toMatch(/Usage: 11 input \/ 7 output tokens/);
      // `caesar apply` semantics: staged in the user's checkout, not committed.
      expect(git(project.root, "diff", "--cached", "--name-only")).toBe("hello.txt");
      expect(readFileSync(join(project.root, "hello.txt"), "utf8")).toBe("OK\n");
    } finally {
      editor.close();
    }
  });

  it("the offer never overwrites the user's uncommitted work; refused, it says so and changes nothing", async () => {
    const project = makeAcpProject([
      {
        tool: { toolCallId: "w", title: "edit", kind: "edit", locations: [{ path: "{{cwd}}/README.md" }] },
        permission: true,
        writeLocal: { path: "{{cwd}}/README.md", content: "# theirs\n" },
      },
      { message: REPORT("Edited README.md.") },
    ]);
    writeFileSync(join(project.root, "README.md"), "# mine, uncommitted\n");
    const editor = startEditor({ cwd: project.root, args: ["--agent", "fixture-acp"] });
    try {
      const { session } = await initialize(editor.agent, project.root);
      await editor.agent.request(acp.methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: "edit the readme" }],
      });
      expect(messages(editor.record)).toMatch(/Not applied: .*uncommitted/s);
      expect(readFileSync(join(project.root, "README.md"), "utf8")).toBe("# mine, uncommitted\n");
    } finally {
      editor.close();
    }
  });

  it("the delegate's questions are asked of the editor's user, with their options", async () => {
    const project = makeAcpProject([
      {
        mcp: {
          tool: "ask_orchestrator",
          arguments: { question: "Which greeting?", options: ["hello", "bonjour"] },
        },
        permission: true,
      },
      { message: REPORT("Asked.") },
    ]);
    const editor = startEditor({
      cwd: project.root,
      args: ["--agent", "fixture-acp"],
      answer: (request) => {
        const chosen = request.options.find((option) => option.name === "bonjour") ?? request.options[0]!;
        return { outcome: { outcome: "selected", optionId: chosen.optionId } };
      },
    });
    try {
      const { session } = await initialize(editor.agent, project.root);
      await editor.agent.request(acp.methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: "ask me" }],
      });
      const question = editor.record.permissions.find(
        (request) => request.toolCall.title === "Which greeting?",
      );
      expect(question?.options.map((option) => option.name)).toEqual(["hello", "bonjour"]);
      // The delegate asked permission to call ask_orchestrator: granted by caesar, never asked of the user.
      expect(editor.record.permissions.map((request) => request.toolCall.title)).toEqual(["Which greeting?"]);
      expect(
        project
          .received()
          .find((entry) => entry.event === "permission" && entry.toolCallId === "mcp_ask_orchestrator"),
      ).toMatchObject({ outcome: { optionId: "once" } });
      const asked = project.received().find((entry) => entry.event === "mcp") as unknown as {
        result: { structuredContent?: { answer?: string } };
      };
      expect(asked.result.structuredContent?.answer).toBe("bonjour");
    } finally {
      editor.close();
    }
  });

  it("session options: the delegate and the mode are the session's choice when no flag fixes them", async () => {
    const project = makeAcpProject([
      {
        tool: { toolCallId: "e", title: "edit", kind: "edit", locations: [{ path: "{{cwd}}/README.md" }] },
        permission: true,
      },
      { message: REPORT("Reviewed.") },
    ]);
    const editor = startEditor({ cwd: project.root });
    try {
      const { session } = await initialize(editor.agent, project.root);
      const delegate = session.configOptions?.find((option) => option.id === "delegate");
      const values =
        delegate && delegate.type === "select"
          ? (delegate.options as { value: string }[]).map((o) => o.value)
          : [];
      expect(values).toEqual(
        expect.arrayContaining(["default", "agent:fixture-acp", "agent:codex", "agent:gemini-acp"]),
      );
      await editor.agent.request(acp.methods.agent.session.setConfigOption, {
        sessionId: session.sessionId,
        configId: "delegate",
        value: "agent:fixture-acp",
      });
      await editor.agent.request(acp.methods.agent.session.setMode, {
        sessionId: session.sessionId,
        modeId: "read-only",
      });
      await editor.agent.request(acp.methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: "review" }],
      });
      const [id] = taskIds(project.root);
      expect(stateOf(project.root, id!).mode).toBe("read-only");
      // Refused by caesar's policy: never asked of the user.
      const refused = project.received().find((entry) => entry.event === "permission") as unknown as {
        outcome: { optionId: string };
      };
      expect(refused.outcome.optionId).toBe("no");
      expect(editor.record.permissions.some((request) => request.toolCall.toolCallId.endsWith(":e"))).toBe(
        false,
      );
      await expect(
        editor.agent.request(acp.methods.agent.session.setConfigOption, {
          sessionId: session.sessionId,
          configId: "delegate",
          value: "nobody",
        }),
      ).rejects.toThrow(/unknown option or value/);
    } finally {
      editor.close();
    }
  });

  it("cancel from the editor cancels the task; the turn ends cancelled", async () => {
    const project = makeAcpProject([
      {
        tool: { toolCallId: "long", title: "long build", kind: "execute", rawInput: { command: "make" } },
        sleep: 120_000,
      },
    ]);
    const editor = startEditor({ cwd: project.root, args: ["--agent", "fixture-acp"] });
    try {
      const { session } = await initialize(editor.agent, project.root);
      const prompt = editor.agent.request(acp.methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: "build" }],
      });
      await editor.waitFor((record) =>
        record.updates.some((update) => "toolCallId" in update && update.toolCallId.endsWith(":long")),
      );
      await editor.agent.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId });
      expect((await prompt).stopReason).toBe("cancelled");
      const [id] = taskIds(project.root);
      expect(stateOf(project.root, id!).outcome).toBe("cancelled");
      expect(project.received().map((entry) => entry.event)).toContain("session/cancel");
    } finally {
      editor.close();
    }
  });

  it("a cancel sent with the prompt, while the task is still being started, cancels it all the same", async () => {
    const project = makeAcpProject([{ sleep: 120_000 }]);
    const editor = startEditor({ cwd: project.root, args: ["--agent", "fixture-acp"] });
    try {
      const { session } = await initialize(editor.agent, project.root);
      const prompt = editor.agent.request(acp.methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: "wait" }],
      });
      await editor.agent.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId });
      expect((await prompt).stopReason).toBe("cancelled");
      const [id] = taskIds(project.root);
      expect(stateOf(project.root, id!)).toMatchObject({ phase: "finished", outcome: "cancelled" });
    } finally {
      editor.close();
    }
  });

  it("a closed editor leaves the task running, findable with caesar ps, and it finishes on its own", async () => {
    const project = makeAcpProject([
      {
        tool: { toolCallId: "slow", title: "slow", kind: "execute", rawInput: { command: "sleep" } },
        // Still running after the editor closed and `caesar ps` looked, however loaded the machine: the
        // tool ends when the test releases it (or after two minutes, which fails the test below).
        sleep: 120_000,
        until: "{{outside}}/release",
      },
      { message: REPORT("Finished without the editor.") },
    ]);
    const editor = startEditor({ cwd: project.root, args: ["--agent", "fixture-acp"] });
    const { session } = await initialize(editor.agent, project.root);
    void editor.agent
      .request(acp.methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: "slow work" }],
      })
      .catch(() => undefined);
    await editor.waitFor((record) =>
      record.updates.some((update) => "toolCallId" in update && update.toolCallId.endsWith(":slow")),
    );
    editor.close();
    const exit = await editor.exited;
    expect(exit.code).toBe(0);
    const [id] = taskIds(project.root);
    const ps = parseJsonOutput<{ id: string; phase: string }[]>(
      await runCaesar(["ps", "--json"], { cwd: project.root }),
    );
    expect(ps.find((task) => task.id === id)?.phase).toBe("running");
    writeFileSync(join(project.outside, "release"), "");
    const deadline = Date.now() + 90_000;
    while (stateOf(project.root, id!).phase !== "finished" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(stateOf(project.root, id!)).toMatchObject({ phase: "finished", outcome: "succeeded" });
  }, 150_000);

  it("refuses --agent with --role, and an unknown fixed agent at session/new with the remedy", async () => {
    const both = await runCaesar(["acp", "--agent", "codex", "--role", "x"], {
      cwd: makeAcpProject([]).root,
    });
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--agent or --role, not both/);
    const project = makeAcpProject([]);
    const editor = startEditor({ cwd: project.root, args: ["--agent", "nobody"] });
    try {
      await expect(initialize(editor.agent, project.root)).rejects.toThrow(/Unknown agent "nobody"/);
    } finally {
      editor.close();
    }
  });
});
