import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { messages, startEditor } from "../helpers/acp-editor.js";
import { makeAcpProject, reportMessage } from "../helpers/acp-fixture.js";
import { FIXTURE_BIN } from "../helpers/repo.js";

const REPORT = reportMessage("Noted.");

/** The editor's own MCP servers: a stdio program (with its env) and an HTTP endpoint. */
function editorServers(noteLog: string): acp.McpServer[] {
  return [
    {
      name: "notes",
      command: process.execPath,
      args: [join(FIXTURE_BIN, "mcp-note.mjs")],
      env: [{ name: "MCP_NOTE_LOG", value: noteLog }],
    },
    { type: "http", name: "remote-docs", url: "http://127.0.0.1:9/mcp", headers: [] },
  ];
}

async function open(editor: ReturnType<typeof startEditor>, cwd: string, mcpServers: acp.McpServer[]) {
  await editor.initialize();
  return editor.agent.request(acp.methods.agent.session.new, { cwd, mcpServers });
}

describe("caesar acp: the editor's MCP servers are passed on to the delegate, or the editor is told why not", () => {
  it("an ACP delegate gets them in session/new beside the return channel and calls their tools; one it cannot take is said", async () => {
    const project = makeAcpProject([
      { mcp: { tool: "editor_note", arguments: { text: "from the delegate" }, server: "notes" } },
      { message: REPORT },
    ]);
    const noteLog = join(project.outside, "notes.log");
    const editor = startEditor({ cwd: project.root, args: ["--agent", "fixture-acp"] });
    try {
      const init = await editor.initialize();
      expect(init.agentCapabilities?.mcpCapabilities).toMatchObject({ http: true, sse: true });
      const { sessionId } = await editor.agent.request(acp.methods.agent.session.new, {
        cwd: project.root,
        mcpServers: editorServers(noteLog),
      });
      await editor.agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "take a note" }],
      });
      const created = project.received().find((entry) => entry.event === "session/new") as
        | { params: { mcpServers: { name: string; command?: string; env?: unknown[] }[] } }
        | undefined;
      const names = created?.params.mcpServers.map((server) => server.name);
      // The return channel first, then the editor's stdio server with its env; the HTTP one is not taken
      // by this delegate (it declares no HTTP support).
      expect(names).toEqual(["caesar", "notes"]);
      expect(created?.params.mcpServers[1]).toMatchObject({
        command: process.execPath,
        env: [{ name: "MCP_NOTE_LOG", value: noteLog }],
      });
      expect(readFileSync(noteLog, "utf8")).toBe("from the delegate\n");
      const answer = messages(editor.record);
      expect(answer).toMatch(/Your MCP servers handed to fixture-acp: notes, remote-docs/);
      expect(answer).toMatch(/MCP server remote-docs not passed on to the agent/);
    } finally {
      editor.close();
    }
  });

  it("a read-only task never gets them (their tools could write): the editor is told", async () => {
    const project = makeAcpProject([{ message: REPORT }]);
    const editor = startEditor({ cwd: project.root, args: ["--agent", "fixture-acp"] });
    try {
      const { sessionId } = await open(editor, project.root, editorServers(join(project.outside, "n.log")));
      await editor.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "read-only" });
      await editor.agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "review" }],
      });
      const created = project.received().find((entry) => entry.event === "session/new") as
        | { params: { mcpServers: { name: string }[] } }
        | undefined;
      expect(created?.params.mcpServers.map((server) => server.name)).toEqual(["caesar"]);
      expect(messages(editor.record)).toMatch(
        /Your MCP servers \(notes, remote-docs\) are not passed on: the task is read-only/,
      );
    } finally {
      editor.close();
    }
  });

  it("a delegate that cannot take them runs without them, and the editor is told which and why", async () => {
    const project = makeAcpProject(
      [],
      `[[agent]]\nid = "plain"\nbin = ${JSON.stringify(join(FIXTURE_BIN, "conformant.sh"))}\n`,
    );
    const noteLog = join(project.outside, "n.log");
    const editor = startEditor({ cwd: project.root, args: ["--agent", "plain"] });
    try {
      const { sessionId } = await open(editor, project.root, editorServers(noteLog));
      await editor.agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "do it" }],
      });
      expect(messages(editor.record)).toMatch(
        /Your MCP servers \(notes, remote-docs\) are not passed on: plain cannot take them/,
      );
      expect(existsSync(noteLog)).toBe(false);
    } finally {
      editor.close();
    }
  });
});
