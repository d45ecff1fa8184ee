import * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { startEditor } from "../helpers/acp-editor.js";
import { makeAcpProject, reportMessage } from "../helpers/acp-fixture.js";

const REPORT = reportMessage("Edited.");

describe("caesar acp: session requests it must refuse, and a cancel during the offer", () => {
  it("refuses a delegate it does not offer (agent:<unknown>) and a relative cwd", async () => {
    const project = makeAcpProject([]);
    const editor = startEditor({ cwd: project.root });
    try {
      await editor.initialize();
      await expect(
        editor.agent.request(acp.methods.agent.session.new, { cwd: "relative/dir", mcpServers: [] }),
      ).rejects.toThrow(/absolute/);
      const { sessionId } = await editor.agent.request(acp.methods.agent.session.new, {
        cwd: project.root,
        mcpServers: [],
      });
      await expect(
        editor.agent.request(acp.methods.agent.session.setConfigOption, {
          sessionId,
          configId: "delegate",
          value: "agent:nobody",
        }),
      ).rejects.toThrow(/unknown option or value/);
      const set = await editor.agent.request(acp.methods.agent.session.setConfigOption, {
        sessionId,
        configId: "delegate",
        value: "agent:fixture-acp",
      });
      expect(set.configOptions.find((option) => option.id === "delegate")?.currentValue).toBe(
        "agent:fixture-acp",
      );
    } finally {
      editor.close();
    }
  });

  it("a cancel while the change is offered ends the turn `cancelled`; the change stays in its worktree", async () => {
    const project = makeAcpProject([
      {
        tool: { toolCallId: "w", title: "edit", kind: "edit", locations: [{ path: "{{cwd}}/src/app.txt" }] },
        permission: true,
        writeLocal: { path: "{{cwd}}/src/app.txt", content: "v2\n" },
      },
      { message: REPORT },
    ]);
    const editor = startEditor({
      cwd: project.root,
      args: ["--agent", "fixture-acp"],
      // The user never answers the offer.
      answer: (request) =>
        request.toolCall.title?.startsWith("Apply")
          ? new Promise(() => undefined)
          : {
              outcome: {
                outcome: "selected",
                optionId: request.options.find((option) => option.kind === "allow_once")!.optionId,
              },
            },
    });
    try {
      await editor.initialize();
      const { sessionId } = await editor.agent.request(acp.methods.agent.session.new, {
        cwd: project.root,
        mcpServers: [],
      });
      const prompt = editor.agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "edit" }],
      });
      await editor.waitFor((record) =>
        record.permissions.some((request) => request.toolCall.title?.startsWith("Apply")),
      );
      await editor.agent.notify(acp.methods.agent.session.cancel, { sessionId });
      expect((await prompt).stopReason).toBe("cancelled");
    } finally {
      editor.close();
    }
  });
});
