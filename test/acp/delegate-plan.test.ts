import * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { startEditor } from "../helpers/acp-editor.js";
import { makeAcpProject, reportMessage } from "../helpers/acp-fixture.js";

const REPORT = reportMessage("Planned.");

describe("caesar acp: the delegate's plan is an ACP plan, within caesar's own", () => {
  it("each plan update of the delegate becomes a `plan` update: caesar's steps with the delegate's inside the first", async () => {
    const project = makeAcpProject([
      {
        plan: [
          { content: "read the code", status: "in_progress" },
          { content: "write the fix", status: "pending" },
        ],
      },
      { sleep: 300 },
      {
        plan: [
          { content: "read the code", status: "completed" },
          { content: "write the fix", status: "in_progress" },
        ],
      },
      { message: REPORT },
    ]);
    const editor = startEditor({ cwd: project.root, args: ["--agent", "fixture-acp"] });
    try {
      await editor.initialize();
      const session = await editor.agent.request(acp.methods.agent.session.new, {
        cwd: project.root,
        mcpServers: [],
      });
      await editor.agent.request(acp.methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: "plan and fix" }],
      });
      const plans = editor.record.updates.flatMap((update) =>
        update.sessionUpdate === "plan"
          ? [update.entries.map((entry) => `${entry.status} ${entry.content}`)]
          : [],
      );
      expect(plans).toContainEqual([
        expect.stringMatching(/^in_progress Run fixture-acp on t_\w+/),
        "in_progress fixture-acp: read the code",
        "pending fixture-acp: write the fix",
        "pending Verify the change against git",
        "pending Offer the change for you to apply",
      ]);
      expect(plans).toContainEqual([
        expect.stringMatching(/^in_progress Run fixture-acp/),
        "completed fixture-acp: read the code",
        "in_progress fixture-acp: write the fix",
        "pending Verify the change against git",
        "pending Offer the change for you to apply",
      ]);
      // The plan is not also told as text.
      const thoughts = editor.record.updates
        .filter((update) => update.sessionUpdate === "agent_thought_chunk")
        .map((update) => (update.content.type === "text" ? update.content.text : ""))
        .join("");
      expect(thoughts).not.toMatch(/Plan \d\/\d/);
    } finally {
      editor.close();
    }
  });
});
