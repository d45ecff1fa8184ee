import * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { messages, startEditor } from "../helpers/acp-editor.js";
import { makeAcpProject } from "../helpers/acp-fixture.js";

async function promptOnce(script: unknown[]): Promise<string> {
  const project = makeAcpProject(script);
  const editor = startEditor({ cwd: project.root, args: ["--agent", "fixture-acp"] });
  try {
    await editor.initialize();
    const { sessionId } = await editor.agent.request(acp.methods.agent.session.new, {
      cwd: project.root,
      mcpServers: [],
    });
    await editor.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "do something" }],
    });
    return messages(editor.record);
  } finally {
    editor.close();
  }
}

describe("caesar acp: a failed ACP delegate's answer is readable, never its JSON-RPC frames", () => {
  it("a prompt the delegate answers with an error: the reason in words, no protocol frames", async () => {
    const answer = await promptOnce([{ error: "model backend unavailable" }]);
    expect(answer).toMatch(/failed/);
    expect(answer).toContain("model backend unavailable");
    expect(answer).not.toMatch(/jsonrpc|"result"|sessionUpdate/);
  });

  it("a delegate that crashes mid-turn: its exit in words, no protocol frames", async () => {
    const answer = await promptOnce([{ message: "working" }, { crash: 3 }]);
    expect(answer).toMatch(/exit code 3/);
    expect(answer).not.toMatch(/jsonrpc|"result"|sessionUpdate/);
  });
});
