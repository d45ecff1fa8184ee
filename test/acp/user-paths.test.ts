import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { startEditor } from "../helpers/acp-editor.js";
import { makeAcpProject, reportMessage } from "../helpers/acp-fixture.js";

const REPORT = reportMessage("Edited.");

describe("caesar acp: the editor is shown the user's files, never the task's worktree", () => {
  it("the permission's preview, the tool calls and the follow-along locations name the user's checkout", async () => {
    const project = makeAcpProject([
      {
        tool: {
          toolCallId: "edit1",
          title: "Edit {{cwd}}/src/app.txt",
          kind: "edit",
          locations: [{ path: "{{cwd}}/src/app.txt", line: 1 }],
          content: [{ type: "diff", path: "{{cwd}}/src/app.txt", oldText: "v1\n", newText: "v2\n" }],
        },
        permission: true,
        writeLocal: { path: "{{cwd}}/src/app.txt", content: "v2\n" },
        diff: { path: "{{cwd}}/src/app.txt", oldText: "v1\n", newText: "v2\n" },
      },
      { message: REPORT },
    ]);
    const editor = startEditor({ cwd: project.root, args: ["--agent", "fixture-acp"] });
    try {
      await editor.initialize();
      const { sessionId } = await editor.agent.request(acp.methods.agent.session.new, {
        cwd: project.root,
        mcpServers: [],
      });
      const result = await editor.agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "bump the version" }],
      });
      expect(result.stopReason).toBe("end_turn");
      const { permissions, updates } = editor.record;
      const userFile = join(project.root, "src/app.txt");
      const edit = permissions.find((request) => request.toolCall.toolCallId.endsWith(":edit1"));
      expect(edit?.toolCall).toMatchObject({
        title: `Edit ${userFile}`,
        locations: [{ path: userFile, line: 1 }],
        content: [{ type: "diff", path: userFile, oldText: "v1\n", newText: "v2\n" }],
      });
      // The follow-along location of the changed file is the user's file.
      const followed = updates.filter(
        (update) => update.sessionUpdate === "tool_call" && /:file\d+$/.test(update.toolCallId),
      );
      expect(followed.length).toBeGreaterThan(0);
      for (const update of followed) expect(update).toMatchObject({ locations: [{ path: userFile }] });
      // Nowhere (titles, previews, locations, the offer) does the editor see the worktree.
      const shown = JSON.stringify({ permissions, updates });
      expect(shown.match(/.{200}\.caesar\/wt.{100}/)?.[0]).toBeUndefined();
    } finally {
      editor.close();
    }
  });
});
