import { describe, expect, it } from "vitest";
import { CheckoutPaths } from "../../src/acp/checkout-paths.js";
import { ShownToolCalls, updatesForEvent } from "../../src/acp/event-updates.js";
import type { CaesarEvent } from "../../src/protocol/event.js";
import { PROTOCOLS } from "../../src/protocol/versions.js";

let seq = 0;
const event = (body: Record<string, unknown>) =>
  ({
    protocol: PROTOCOLS.event,
    seq: ++seq,
    at: new Date().toISOString(),
    task_id: "t_1",
    ...body,
  }) as CaesarEvent;
const tool = { id: "c1", title: "Edit a.ts", kind: "edit" };

describe("updatesForEvent: a permission's tool call, announced once and never revived", () => {
  it("an answer that arrives after the call ended does not mark it running again", () => {
    const calls = new ShownToolCalls();
    const seen = [
      event({ type: "tool_use", id: "c1", tool: "edit", status: "started" }),
      event({ type: "question", question_id: "q_1", question: "Allow?", options: ["Allow", "Reject"], tool }),
      event({ type: "tool_use", id: "c1", tool: "edit", status: "succeeded" }),
      event({ type: "answer", question_id: "q_1", answer: "Allow" }),
    ].flatMap((e) =>
      updatesForEvent(e, new CheckoutPaths({ workspace: "/ws", worktree: null, top: null }), calls),
    );
    const ofCall = seen.filter((update) => "toolCallId" in update && update.toolCallId === "t_1:c1");
    expect(
      ofCall.map((update) => [update.sessionUpdate, "status" in update ? update.status : undefined]),
    ).toEqual([
      ["tool_call", "in_progress"],
      ["tool_call_update", "pending"],
      ["tool_call_update", "completed"],
    ]);
  });

  it("a question first: the call is created pending, then runs once allowed; a refusal does not run it", () => {
    const calls = new ShownToolCalls();
    const allowed = [
      event({ type: "question", question_id: "q_2", question: "Allow?", tool }),
      event({ type: "answer", question_id: "q_2", answer: "Allow" }),
      event({ type: "tool_use", id: "c1", tool: "edit", status: "started" }),
    ].flatMap((e) =>
      updatesForEvent(e, new CheckoutPaths({ workspace: "/ws", worktree: null, top: null }), calls),
    );
    expect(
      allowed
        .filter((update) => "toolCallId" in update)
        .map((update) => [update.sessionUpdate, "status" in update ? update.status : undefined]),
    ).toEqual([
      ["tool_call", "pending"],
      ["tool_call_update", "in_progress"],
      ["tool_call_update", "in_progress"],
    ]);
    const refused = [
      event({ type: "question", question_id: "q_3", question: "Allow?", tool: { ...tool, id: "c2" } }),
      event({ type: "answer", question_id: "q_3", answer: "Reject" }),
    ].flatMap((e) =>
      updatesForEvent(e, new CheckoutPaths({ workspace: "/ws", worktree: null, top: null }), calls),
    );
    expect(refused.filter((update) => update.sessionUpdate === "tool_call_update")).toEqual([]);
  });
});
