import { expect, it } from "vitest";
import { PIXEL } from "../helpers/acp-fixture.js";
import { describeLiveEditor, LIVE_EDITOR_TIMEOUT_MS, startLiveEditor } from "../helpers/live-editor.js";

// The real gemini CLI (pinned in test/agent-clis) as the delegate of `caesar acp`, against caesar mock-model.
describeLiveEditor("gemini-acp", "live: an image prompt reaches a real ACP delegate's model", () => {
  it(
    "the editor's image goes through caesar and gemini to the model, with the text",
    async () => {
      const live = await startLiveEditor("gemini-acp", {
        name: "look",
        steps: [{ report: { status: "success", summary: "A single pixel." } }],
      });
      try {
        const { initialized, session } = await live.open();
        expect(initialized.agentCapabilities?.promptCapabilities?.image).toBe(true);
        const result = await live.prompt(session.sessionId, [
          { type: "text", text: "what is in this picture?" },
          { type: "image", mimeType: "image/png", data: PIXEL },
        ]);
        expect(result.stopReason).toBe("end_turn");
        // What the model was sent: the image's bytes, beside the brief.
        const bodies = live.requests.map((request) => JSON.stringify(request.body ?? ""));
        expect(bodies.some((body) => body.includes(PIXEL) && body.includes("what is in this picture?"))).toBe(
          true,
        );
      } finally {
        await live.close();
      }
    },
    LIVE_EDITOR_TIMEOUT_MS,
  );
});
