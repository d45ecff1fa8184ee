import type * as acp from "@agentclientprotocol/sdk";
import { expect, it } from "vitest";
import { describeLiveEditor, LIVE_EDITOR_TIMEOUT_MS, startLiveEditor } from "../helpers/live-editor.js";

type Usage = Extract<acp.SessionUpdate, { sessionUpdate: "usage_update" }>;

// The real opencode CLI (pinned in test/agent-clis) as the delegate of `caesar acp`, against caesar mock-model
// (whose opencode setup declares a 128,000-token context window).
describeLiveEditor("opencode-acp", "live: usage_update from a real ACP delegate", () => {
  it(
    "opencode's own usage (tokens in context, its window, its cost) reaches the editor as usage_update",
    async () => {
      const live = await startLiveEditor("opencode-acp", {
        name: "usage",
        steps: [
          { shell: "echo OK > hello.txt", description: "Write hello.txt" },
          { report: { status: "success", summary: "Created hello.txt." } },
        ],
      });
      try {
        const { session } = await live.open();
        const result = await live.prompt(session.sessionId, [{ type: "text", text: "create hello.txt" }]);
        expect(result.stopReason).toBe("end_turn");
        const usages = live.editor.record.updates.filter(
          (update): update is Usage => update.sessionUpdate === "usage_update",
        );
        expect(usages.length).toBeGreaterThan(0);
        const last = usages.at(-1)!;
        expect(last.size).toBe(128_000);
        expect(last.used).toBeGreaterThan(0);
        expect(last.cost).toMatchObject({ currency: "USD" });
      } finally {
        await live.close();
      }
    },
    LIVE_EDITOR_TIMEOUT_MS,
  );
});
