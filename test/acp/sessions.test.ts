import * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { messages, startEditor } from "../helpers/acp-editor.js";
import { makeAcpProject, reportMessage } from "../helpers/acp-fixture.js";

const REPORT = reportMessage("Looked around.");

describe("caesar acp: sessions that last — kept in caesar's records, listed, loaded, resumed", () => {
  it("a session outlives its `caesar acp`: another one lists it, loads it with its history, options and tasks", async () => {
    const project = makeAcpProject([{ message: REPORT }]);
    const first = startEditor({ cwd: project.root, args: ["--agent", "fixture-acp"] });
    let sessionId: string;
    try {
      await first.initialize();
      ({ sessionId } = await first.agent.request(acp.methods.agent.session.new, {
        cwd: project.root,
        mcpServers: [],
      }));
      await first.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "read-only" });
      await first.agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "look around the project" }],
      });
    } finally {
      first.close();
    }
    await first.exited;
    const taskId = /t_\w+/.exec(messages(first.record))![0];

    const second = startEditor({ cwd: project.root, args: ["--agent", "fixture-acp"] });
    try {
      const init = await second.initialize();
      expect(init.agentCapabilities).toMatchObject({
        loadSession: true,
        sessionCapabilities: { list: {}, resume: {}, close: {} },
      });
      const listed = await second.agent.request(acp.methods.agent.session.list, { cwd: project.root });
      expect(listed.sessions).toContainEqual(
        expect.objectContaining({ sessionId, cwd: project.root, title: "look around the project" }),
      );

      const loaded = await second.agent.request(acp.methods.agent.session.load, {
        sessionId,
        cwd: project.root,
        mcpServers: [],
      });
      expect(loaded.modes?.currentModeId).toBe("read-only");
      // The history was streamed before the answer: the prompt, then what became of it.
      const history = second.record.updates.filter(
        (update) =>
          update.sessionUpdate === "user_message_chunk" || update.sessionUpdate === "agent_message_chunk",
      );
      expect(
        history.map((update) =>
          "content" in update && update.content.type === "text"
            ? `${update.sessionUpdate}: ${update.content.text}`
            : "",
        ),
      ).toEqual([
        "user_message_chunk: look around the project",
        expect.stringContaining(`agent_message_chunk: ${taskId}: Looked around.`),
      ]);

      // The session's tasks are back: /status knows the task.
      await second.agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "/status" }],
      });
      expect(messages(second.record)).toContain(`- ${taskId}: finished (succeeded), fixture-acp, read-only`);

      const resumed = await second.agent.request(acp.methods.agent.session.resume, {
        sessionId,
        cwd: project.root,
      });
      expect(resumed.modes?.currentModeId).toBe("read-only");
      await second.agent.request(acp.methods.agent.session.close, { sessionId });
      await expect(
        second.agent.request(acp.methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: "text", text: "/status" }],
        }),
      ).rejects.toThrow();
      await expect(
        second.agent.request(acp.methods.agent.session.load, {
          sessionId: "caesar-0000000000000000",
          cwd: project.root,
          mcpServers: [],
        }),
      ).rejects.toThrow(/not found/i);
    } finally {
      second.close();
    }
  });
});
