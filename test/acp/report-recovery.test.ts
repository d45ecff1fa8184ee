import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { messages, startEditor } from "../helpers/acp-editor.js";
import { makeAcpProject, reportMessage } from "../helpers/acp-fixture.js";

const REPORT = reportMessage("Looked.");

describe("caesar acp: an ACP delegate's report is read from its message, not from the protocol's frames", () => {
  it("a report sent in chunks is recovered with no finding about a broken fenced block", async () => {
    // The fixture sends each message in two chunks: raw.log holds two JSON-RPC frames, each half a block.
    const project = makeAcpProject([{ message: REPORT }]);
    const editor = startEditor({ cwd: project.root, args: ["--agent", "fixture-acp"] });
    try {
      await editor.initialize();
      const { sessionId } = await editor.agent.request(acp.methods.agent.session.new, {
        cwd: project.root,
        mcpServers: [],
      });
      await editor.agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "look" }],
      });
      const answer = messages(editor.record);
      expect(answer).toMatch(/: success\*\* \(succeeded, report from fenced\)/);
      expect(answer).not.toMatch(/Findings:/);
      const tasks = join(project.root, ".caesar", "tasks");
      const state = JSON.parse(readFileSync(join(tasks, readdirSync(tasks)[0]!, "state.json"), "utf8"));
      expect(state.report.findings).toEqual([]);
    } finally {
      editor.close();
    }
  });
});
