import * as acp from "@agentclientprotocol/sdk";

/** The editor's side of one session: updates sent in order, requests made on its behalf. */
export interface EditorLink {
  readonly client: acp.AgentContext;
  readonly sessionId: string;
  /** Queue a `session/update`; updates reach the editor in the order they were queued. */
  send(update: acp.SessionUpdate): Promise<void>;
  /** A message from caesar itself (not from the delegate). */
  say(text: string): Promise<void>;
  /** Everything queued so far has been sent. */
  flush(): Promise<void>;
}

export function makeEditorLink(client: acp.AgentContext, sessionId: string): EditorLink {
  let chain: Promise<void> = Promise.resolve();
  let said = 0;
  const send = (update: acp.SessionUpdate) => {
    chain = chain
      .then(() => client.notify(acp.methods.client.session.update, { sessionId, update }))
      // An editor that went away takes its updates with it; the task goes on.
      .catch(() => undefined);
    return chain;
  };
  return {
    client,
    sessionId,
    send,
    say: (text) =>
      send({
        sessionUpdate: "agent_message_chunk",
        messageId: `caesar-${sessionId}-${++said}`,
        content: { type: "text", text: `${text}\n\n` },
      }),
    flush: () => chain,
  };
}
