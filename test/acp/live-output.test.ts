import { writeFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { type EditorRecord, startEditor } from "../helpers/acp-editor.js";
import { makeAcpProject, reportMessage } from "../helpers/acp-fixture.js";
import { describeLiveEditor, LIVE_EDITOR_TIMEOUT_MS, startLiveEditor } from "../helpers/live-editor.js";
import { tempDir } from "../helpers/repo.js";

const REPORT = reportMessage("Counted.");

/** The texts the editor was shown as a tool call's content while it was in progress, in order. */
function liveTexts(record: EditorRecord, suffix: string): string[] {
  return record.updates.flatMap((update) =>
    update.sessionUpdate === "tool_call_update" &&
    update.toolCallId.endsWith(suffix) &&
    update.status === "in_progress"
      ? (update.content ?? []).flatMap((item) =>
          item.type === "content" && item.content.type === "text" ? [item.content.text] : [],
        )
      : [],
  );
}

describe("caesar acp: a delegate's command output, live", () => {
  it("the output so far is the tool call's content while it still runs, then it ends", async () => {
    const project = makeAcpProject([
      {
        tool: { toolCallId: "count", title: "count", kind: "execute", rawInput: { command: "./count.sh" } },
        streamed: ["line1\n", "line2\n"],
        // The command goes on until the test says the editor saw its output.
        sleep: 120_000,
        until: "{{outside}}/go",
        output: "line1\nline2\nline3\n",
      },
      { message: REPORT },
    ]);
    const go = join(project.outside, "go");
    const editor = startEditor({ cwd: project.root, args: ["--agent", "fixture-acp"] });
    try {
      await editor.initialize();
      const { sessionId } = await editor.agent.request(acp.methods.agent.session.new, {
        cwd: project.root,
        mcpServers: [],
      });
      const turn = editor.agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "count" }],
      });
      // While the command runs (it cannot end before `go` exists), the editor sees what it printed.
      await editor.waitFor((record) => liveTexts(record, ":count").includes("line1\nline2\n"), 120_000);
      const ended = editor.record.updates.some(
        (update) =>
          update.sessionUpdate === "tool_call_update" &&
          update.toolCallId.endsWith(":count") &&
          (update.status === "completed" || update.status === "failed"),
      );
      expect(ended).toBe(false);
      writeFileSync(go, "");
      expect((await turn).stopReason).toBe("end_turn");
      expect(liveTexts(editor.record, ":count")).toEqual(["line1\n", "line1\nline2\n"]);
    } finally {
      writeFileSync(go, "");
      editor.close();
    }
  });
});

// The real opencode CLI (pinned in test/agent-clis) as the delegate of `caesar acp`, against caesar mock-model.
describeLiveEditor("opencode-acp", "live: a real ACP delegate's command output, as it comes", () => {
  it(
    "opencode's command prints a line and waits; the editor sees the line before the command ends",
    async () => {
      const gate = tempDir("caesar-gate-");
      const go = join(gate, "go");
      const live = await startLiveEditor("opencode-acp", {
        name: "gated",
        steps: [
          {
            shell: `echo line1; while [ ! -e ${go} ]; do sleep 0.2; done; echo line2`,
            description: "Print, wait, print",
          },
          { report: { status: "success", summary: "Printed." } },
        ],
      });
      try {
        const { session } = await live.open();
        const turn = live.prompt(session.sessionId, [{ type: "text", text: "print" }]);
        // The command cannot end before `go` exists: what the editor sees now, it saw live.
        await live.editor.waitFor(
          (record) => liveTexts(record, "").some((text) => text.includes("line1")),
          LIVE_EDITOR_TIMEOUT_MS - 60_000,
        );
        expect(liveTexts(live.editor.record, "").some((text) => text.includes("line2"))).toBe(false);
        writeFileSync(go, "");
        expect((await turn).stopReason).toBe("end_turn");
      } finally {
        // Never leave the command waiting (the task outlives a closed editor).
        writeFileSync(go, "");
        await live.close();
      }
    },
    LIVE_EDITOR_TIMEOUT_MS,
  );
});
