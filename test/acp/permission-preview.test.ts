import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { startEditor } from "../helpers/acp-editor.js";
import { makeAcpProject, reportMessage } from "../helpers/acp-fixture.js";

const REPORT = reportMessage("Edited.");

describe("caesar acp: a delegate's permission request shows the delegate's own tool call, diff included", () => {
  it("the editor is asked about the edit itself (kind, title, locations, diff), then sees it run under the same id", async () => {
    const project = makeAcpProject([
      {
        tool: {
          toolCallId: "edit1",
          title: "Edit src/app.txt",
          kind: "edit",
          locations: [{ path: "{{cwd}}/src/app.txt", line: 1 }],
          content: [{ type: "diff", path: "{{cwd}}/src/app.txt", oldText: "v1\n", newText: "v2\n" }],
        },
        permission: true,
        writeLocal: { path: "{{cwd}}/src/app.txt", content: "v2\n" },
      },
      {
        tool: {
          toolCallId: "rm1",
          title: "rm -rf src",
          kind: "execute",
          rawInput: { command: "rm -rf src" },
        },
        permission: true,
        shell: "rm -rf src",
      },
      { message: REPORT },
    ]);
    const editor = startEditor({
      cwd: project.root,
      args: ["--agent", "fixture-acp"],
      // The user allows the edit and rejects the command.
      answer: (request) => {
        const kind = request.toolCall.kind === "execute" ? "reject_once" : "allow_once";
        const option = request.options.find((candidate) => candidate.kind === kind) ?? request.options[0]!;
        return { outcome: { outcome: "selected", optionId: option.optionId } };
      },
    });
    try {
      await editor.initialize();
      const session = await editor.agent.request(acp.methods.agent.session.new, {
        cwd: project.root,
        mcpServers: [],
      });
      const result = await editor.agent.request(acp.methods.agent.session.prompt, {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: "bump the version" }],
      });
      expect(result.stopReason).toBe("end_turn");
      const { permissions, updates } = editor.record;
      const edit = permissions.find((request) => request.toolCall.toolCallId.endsWith(":edit1"));
      expect(edit?.toolCall).toMatchObject({
        title: "Edit src/app.txt",
        kind: "edit",
        status: "pending",
        locations: [{ path: expect.stringMatching(/src\/app\.txt$/), line: 1 }],
        content: [
          { type: "diff", path: expect.stringMatching(/src\/app\.txt$/), oldText: "v1\n", newText: "v2\n" },
        ],
      });
      const rm = permissions.find((request) => request.toolCall.toolCallId.endsWith(":rm1"));
      expect(rm?.toolCall).toMatchObject({ title: "rm -rf src", kind: "execute", status: "pending" });
      // No separate "asks permission" call of kind think.
      expect(updates.some((update) => update.sessionUpdate === "tool_call" && update.kind === "think")).toBe(
        false,
      );
      expect(permissions.some((request) => /asks permission/.test(request.toolCall.title ?? ""))).toBe(false);

      // Announced once, shown pending with its diff while the user decides, then updated in place.
      const editUpdates = updates.filter(
        (update) => "toolCallId" in update && update.toolCallId === edit!.toolCall.toolCallId,
      );
      expect(editUpdates.filter((update) => update.sessionUpdate === "tool_call")).toHaveLength(1);
      expect(editUpdates).toContainEqual(
        expect.objectContaining({
          status: "pending",
          title: "Edit src/app.txt",
          content: [expect.objectContaining({ type: "diff", oldText: "v1\n", newText: "v2\n" })],
        }),
      );
      const statuses = editUpdates.map((update) => ("status" in update ? update.status : undefined));
      const afterAsking = statuses.slice(statuses.lastIndexOf("pending"));
      // Running once allowed (unless it had already ended when the answer was seen), never after its end.
      expect([
        ["pending", "in_progress", "completed"],
        ["pending", "completed"],
      ]).toContainEqual(afterAsking.filter((status, index) => status !== afterAsking[index - 1]));
      const rmUpdates = updates.filter(
        (update) => "toolCallId" in update && update.toolCallId === rm!.toolCall.toolCallId,
      );
      expect(rmUpdates.at(-1)).toMatchObject({ status: "failed" });
      // The rejected command never ran in the task's workspace; the edit reached the user's checkout.
      expect(readFileSync(join(project.root, "src/app.txt"), "utf8")).toBe("v2\n");
    } finally {
      editor.close();
    }
  });
});
