import type * as acp from "@agentclientprotocol/sdk";
import type { EditorLink } from "./editor-link.js";
import type { StoredSession } from "./session-store.js";

/** What a prompt said, as a session's history keeps it (its text, at most 2,000 characters). */
export function promptText(prompt: acp.ContentBlock[]): string {
  return prompt
    .map((block) => (block.type === "text" ? block.text : ""))
    .join("\n")
    .trim()
    .slice(0, 2000);
}

/**
 * A loaded session's history, streamed to the editor as ACP's `session/load` asks: each turn's prompt as
 * the user's message, and what became of it — its task and the task's summary — as caesar's.
 */
export async function replayHistory(
  stored: Pick<StoredSession, "id" | "turns">,
  link: EditorLink,
): Promise<void> {
  stored.turns.forEach((turn, index) => {
    void link.send({
      sessionUpdate: "user_message_chunk",
      messageId: `${stored.id}-u${index}`,
      content: { type: "text", text: turn.prompt },
    });
    const answer = turn.task
      ? `${turn.task}: ${turn.summary ?? "no summary"} (\`caesar show ${turn.task}\`)`
      : (turn.summary ?? "");
    if (answer) {
      void link.send({
        sessionUpdate: "agent_message_chunk",
        messageId: `${stored.id}-a${index}`,
        content: { type: "text", text: answer },
      });
    }
  });
  await link.flush();
}
