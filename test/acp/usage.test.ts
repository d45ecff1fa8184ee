import * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { messages, startEditor } from "../helpers/acp-editor.js";
import { makeAcpProject, reportMessage } from "../helpers/acp-fixture.js";

const REPORT = reportMessage("Looked.");

type Usage = Extract<acp.SessionUpdate, { sessionUpdate: "usage_update" }>;

async function session(editor: ReturnType<typeof startEditor>, cwd: string) {
  const { sessionId } = await editor.openSession(cwd);
  return (text: string) =>
    editor.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
}

const usages = (editor: ReturnType<typeof startEditor>) =>
  editor.record.updates.filter((update): update is Usage => update.sessionUpdate === "usage_update");

describe("caesar acp: usage_update from what the delegate states", () => {
  it("the delegate's context (used of size) and the session's cost, summed over its tasks", async () => {
    const project = makeAcpProject([
      { usage: { used: 1200, size: 200000, cost: { amount: 0.01, currency: "USD" } } },
      { message: REPORT },
    ]);
    const editor = startEditor({ cwd: project.root, args: ["--agent", "fixture-acp"] });
    try {
      const prompt = await session(editor, project.root);
      await prompt("look around");
      expect(usages(editor).at(-1)).toMatchObject({
        used: 1200,
        size: 200000,
        cost: { amount: 0.01, currency: "USD" },
      });
      const first = usages(editor).length;
      // A second task of the same session: its cost adds to the first's.
      await prompt("look again");
      const second = usages(editor).slice(first);
      expect(second.length).toBeGreaterThan(0);
      expect(second.at(-1)?.cost?.amount).toBeCloseTo(0.02, 10);
      // The usage is not also told as text.
      const thoughts = editor.record.updates
        .filter((update) => update.sessionUpdate === "agent_thought_chunk")
        .map((update) => (update.content.type === "text" ? update.content.text : ""))
        .join("");
      expect(thoughts).not.toMatch(/Context: 1200/);
    } finally {
      editor.close();
    }
  });

  it("a delegate that states no context window: no usage_update (caesar invents no size), the answer tells the tokens", async () => {
    const project = makeAcpProject([{ message: REPORT }]);
    const editor = startEditor({ cwd: project.root, args: ["--agent", "fixture-acp"] });
    try {
      const prompt = await session(editor, project.root);
      await prompt("look around");
      expect(usages(editor)).toEqual([]);
      expect(messages(editor.record)).toMatch(/Usage: 11 input \/ 7 output tokens/);
    } finally {
      editor.close();
    }
  });
});
