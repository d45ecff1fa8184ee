import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { messages } from "../helpers/acp-editor.js";
import { describeLiveEditor, LIVE_EDITOR_TIMEOUT_MS, startLiveEditor } from "../helpers/live-editor.js";
import { FIXTURE_BIN } from "../helpers/repo.js";

// The real opencode CLI (pinned in test/agent-clis) as the delegate of `caesar acp`, against caesar mock-model.
describeLiveEditor("opencode-acp", "live: the editor's MCP servers reach a real ACP delegate", () => {
  it(
    "opencode calls a tool of the editor's own MCP server, given at session/new",
    async () => {
      const live = await startLiveEditor("opencode-acp", {
        name: "editor-tool",
        steps: [
          { call: { tool: "editor_note", arguments: { text: "from opencode" } } },
          { report: { status: "success", summary: "Noted for the editor." } },
        ],
      });
      // In the task's directory: the editor's server is started by the agent, inside its OS sandbox.
      const noteLog = "$CAESAR_TASK_DIR/notes.log";
      try {
        const { session } = await live.open({}, [
          {
            name: "notes",
            command: process.execPath,
            args: [join(FIXTURE_BIN, "mcp-note.mjs")],
            env: [{ name: "MCP_NOTE_LOG", value: noteLog }],
          },
        ]);
        const result = await live.prompt(session.sessionId, [{ type: "text", text: "take a note" }]);
        expect(result.stopReason).toBe("end_turn");
        const answer = messages(live.editor.record);
        expect(answer).toMatch(/Your MCP servers handed to opencode-acp: notes/);
        const tasks = join(live.root, ".caesar", "tasks");
        const logs = readdirSync(tasks)
          .map((id) => join(tasks, id, "notes.log"))
          .filter((path) => existsSync(path));
        expect(
          logs.map((path) => readFileSync(path, "utf8")),
          answer,
        ).toEqual(["from opencode\n"]);
        expect(answer).toContain("Noted for the editor.");
      } finally {
        await live.close();
      }
    },
    LIVE_EDITOR_TIMEOUT_MS,
  );
});
