import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { messages, startEditor } from "../helpers/acp-editor.js";
import { makeAcpProject, reportMessage } from "../helpers/acp-fixture.js";
import { git } from "../helpers/repo.js";

const REPORT = reportMessage("Bumped.");

describe("caesar acp: slash commands and a model picker", () => {
  it("offers /status /diff /apply /cancel; they act on the session's tasks; the model option reaches the delegate", async () => {
    const project = makeAcpProject(
      [
        {
          tool: {
            toolCallId: "w",
            title: "edit",
            kind: "edit",
            locations: [{ path: "{{cwd}}/src/app.txt" }],
          },
          permission: true,
          writeLocal: { path: "{{cwd}}/src/app.txt", content: "v2\n" },
        },
        { message: REPORT },
      ],
      '[models]\nfixture-acp = "base"\ncodex = "large"\n',
    );
    const editor = startEditor({
      cwd: project.root,
      args: ["--agent", "fixture-acp"],
      // The change is kept in its worktree when offered: /apply takes it later.
      answer: (request) => {
        const kind = request.toolCall.title?.startsWith("Apply") ? "reject_once" : "allow_once";
        const option = request.options.find((candidate) => candidate.kind === kind)!;
        return { outcome: { outcome: "selected", optionId: option.optionId } };
      },
    });
    try {
      const session = await editor.openSession(project.root);
      await editor.waitFor((record) =>
        record.updates.some((update) => update.sessionUpdate === "available_commands_update"),
      );
      const offered = editor.record.updates.find(
        (update) => update.sessionUpdate === "available_commands_update",
      );
      expect(
        offered?.sessionUpdate === "available_commands_update" &&
          offered.availableCommands.map((command) => command.name),
      ).toEqual(["status", "diff", "apply", "cancel"]);

      const model = session.configOptions?.find((option) => option.category === "model");
      expect(model).toMatchObject({ id: "model", type: "select", currentValue: "default" });
      expect(model?.type === "select" && (model.options as { value: string }[]).map((o) => o.value)).toEqual([
        "default",
        "base",
        "large",
      ]);
      await editor.agent.request(acp.methods.agent.session.setConfigOption, {
        sessionId: session.sessionId,
        configId: "model",
        value: "large",
      });
      await expect(
        editor.agent.request(acp.methods.agent.session.setConfigOption, {
          sessionId: session.sessionId,
          configId: "model",
          value: "nonesuch",
        }),
      ).rejects.toThrow(/unknown option or value/);

      const prompt = (text: string) =>
        editor.agent.request(acp.methods.agent.session.prompt, {
          sessionId: session.sessionId,
          prompt: [{ type: "text", text }],
        });
      await prompt("bump the version");
      expect(
        project.received().find((entry) => entry.event === "session/set_config_option")?.params,
      ).toMatchObject({ configId: "model", value: "large" });
      const [taskId] = messages(editor.record).match(/t_\w+/) ?? [];
      expect(readFileSync(join(project.root, "src/app.txt"), "utf8")).toBe("v1\n");

      const before = editor.record.updates.length;
      expect((await prompt("/status")).stopReason).toBe("end_turn");
      expect(messages(editor.record)).toContain(
        `- ${taskId}: finished (succeeded), fixture-acp, write — Bumped.`,
      );

      await prompt("/diff");
      const diff = editor.record.updates
        .slice(before)
        .find((update) => update.sessionUpdate === "tool_call" && update.kind === "edit");
      expect(diff).toMatchObject({
        content: [
          { type: "diff", path: join(project.root, "src/app.txt"), oldText: "v1\n", newText: "v2\n" },
        ],
      });

      await prompt("/apply");
      expect(messages(editor.record)).toMatch(/Applied t_\w+: 1 file\(s\) staged/);
      expect(git(project.root, "diff", "--cached", "--name-only")).toBe("src/app.txt");
      // No command started a task of its own.
      expect(project.received().filter((entry) => entry.event === "session/prompt")).toHaveLength(1);
    } finally {
      editor.close();
    }
  });

  it("/cancel, sent while a prompt runs, cancels its task; that turn ends cancelled", async () => {
    const project = makeAcpProject([{ sleep: 120_000 }]);
    const editor = startEditor({ cwd: project.root, args: ["--agent", "fixture-acp"] });
    try {
      const session = await editor.openSession(project.root);
      const running = editor.agent.request(acp.methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: "wait" }],
      });
      await editor.waitFor((record) => /Delegated to fixture-acp/.test(messages(record)));
      const cancel = await editor.agent.request(acp.methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: "/cancel" }],
      });
      expect(cancel.stopReason).toBe("end_turn");
      expect((await running).stopReason).toBe("cancelled");
      expect(messages(editor.record)).toContain("Cancelling the task under way.");
    } finally {
      editor.close();
    }
  });
});
