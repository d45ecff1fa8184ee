import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { startEditor } from "../helpers/acp-editor.js";
import { makeAcpProject, reportMessage } from "../helpers/acp-fixture.js";

const REPORT = reportMessage("Read.");

const shell = (id: string, command: string) => ({
  tool: { toolCallId: id, title: command, kind: "execute", rawInput: { command } },
  permission: true,
  shell: command,
});

describe("caesar acp, read-only: a delegate's commands are judged by an allow-list, abbreviations resolved", () => {
  it("refuses `sed --in` and `sort --outp=` without asking the editor, and asks it about ordinary reads", async () => {
    const project = makeAcpProject([
      shell("sed", "sed --in -e s/v1/pwned/ src/app.txt"),
      shell("sort", "sort --outp=src/app.txt README.md"),
      shell("log", "git log --oneline -1"),
      shell("grep", "grep -rn v1 src"),
      { message: REPORT },
    ]);
    const editor = startEditor({ cwd: project.root, args: ["--agent", "fixture-acp"] });
    try {
      await editor.initialize();
      const session = await editor.agent.request(acp.methods.agent.session.new, {
        cwd: project.root,
        mcpServers: [],
      });
      await editor.agent.request(acp.methods.agent.session.setMode, {
        sessionId: session.sessionId,
        modeId: "read-only",
      });
      const result = await editor.agent.request(acp.methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: "look around" }],
      });
      expect(result.stopReason).toBe("end_turn");
      const outcomes = Object.fromEntries(
        project
          .received()
          .filter((entry) => entry.event === "permission")
          .map((entry) => [entry.toolCallId, (entry.outcome as { optionId: string }).optionId]),
      );
      expect(outcomes).toEqual({ sed: "no", sort: "no", log: "once", grep: "once" });
      // Only what caesar's policy allows reaches the editor's user.
      const asked = editor.record.permissions.map((request) => request.toolCall.title ?? "").join("\n");
      expect(asked).toContain("git log --oneline -1");
      expect(asked).toContain("grep -rn v1 src");
      expect(asked).not.toMatch(/sed --in|sort --outp/);
      // The refusals are shown to the editor as failed calls.
      const failed = editor.record.updates.filter(
        (update) =>
          update.sessionUpdate === "tool_call_update" &&
          /:(sed|sort)$/.test(update.toolCallId) &&
          update.status === "failed",
      );
      expect(failed.length).toBeGreaterThanOrEqual(2);
      expect(readFileSync(join(project.root, "src/app.txt"), "utf8")).toBe("v1\n");
    } finally {
      editor.close();
    }
  });
});
