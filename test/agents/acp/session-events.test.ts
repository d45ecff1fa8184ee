import { describe, expect, it } from "vitest";
import { SessionEvents } from "../../../src/agents/acp/session-events.js";
import type { EventBody } from "../../../src/protocol/event.js";
import { pairingProblems } from "../../helpers/event-checks.js";
import { invalidEvents } from "../../helpers/replay.js";

const WS = "/work/space";

describe("SessionEvents: session/update → caesar.event/v1", () => {
  it("tool calls start and end by id; a call only ever reported finished still gets both", () => {
    const events = new SessionEvents(WS);
    const out: EventBody[] = [];
    out.push(
      ...events.update({
        sessionUpdate: "tool_call",
        toolCallId: "a",
        title: "bash",
        kind: "execute",
        status: "pending",
        rawInput: {},
      }),
    );
    expect(out).toEqual([]);
    out.push(
      ...events.update({
        sessionUpdate: "tool_call_update",
        toolCallId: "a",
        status: "in_progress",
        rawInput: { command: "ls" },
      }),
    );
    out.push(...events.update({ sessionUpdate: "tool_call_update", toolCallId: "a", status: "in_progress" }));
    out.push(
      ...events.update({
        sessionUpdate: "tool_call_update",
        toolCallId: "a",
        status: "completed",
        content: [{ type: "content", content: { type: "text", text: "a.txt" } }],
      }),
    );
    out.push(
      ...events.update({
        sessionUpdate: "tool_call_update",
        toolCallId: "b",
        status: "failed",
        title: "Write x",
        kind: "edit",
        rawOutput: { error: "disk full" },
      }),
    );
    expect(out.map((e) => [e.type, "id" in e ? e.id : "", "status" in e ? e.status : ""])).toEqual([
      ["tool_use", "a", "started"],
      ["tool_use", "a", "succeeded"],
      ["tool_use", "b", "started"],
      ["tool_use", "b", "failed"],
    ]);
    expect(out[1]).toMatchObject({ tool: "shell", input_summary: "ls", output_summary: "a.txt" });
    expect(out[3]).toMatchObject({ tool: "edit", output_summary: "disk full" });
  });

  it("message chunks are one message until something else happens or the message id changes", () => {
    const events = new SessionEvents(WS);
    const out: EventBody[] = [];
    for (const text of ["Hel", "lo"])
      out.push(
        ...events.update({
          sessionUpdate: "agent_message_chunk",
          messageId: "m1",
          content: { type: "text", text },
        }),
      );
    out.push(
      ...events.update({
        sessionUpdate: "agent_message_chunk",
        messageId: "m2",
        content: { type: "text", text: "Again" },
      }),
    );
    out.push(
      ...events.update({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "hmm" } }),
    );
    out.push(...events.flush());
    expect(out).toEqual([
      { type: "message", text: "Hello", role: "assistant" },
      { type: "message", text: "Again", role: "assistant" },
      { type: "thinking", text: "hmm" },
    ]);
    expect(events.state.finalText).toBe("Again");
  });

  it("a plan is progress, its steps kept; diffs of a completed edit are file changes relative to the workspace", () => {
    const events = new SessionEvents(WS);
    const plan = events.update({
      sessionUpdate: "plan",
      entries: [
        { content: "read", status: "completed", priority: "high" },
        { content: "write", status: "in_progress", priority: "high" },
        { content: "test", status: "pending", priority: "low" },
      ],
    });
    expect(plan).toEqual([
      {
        type: "progress",
        message: "Plan 1/3: write — [x] read; [>] write; [ ] test",
        pct: 33,
        plan: [
          { content: "read", status: "completed" },
          { content: "write", status: "in_progress" },
          { content: "test", status: "pending" },
        ],
      },
    ]);
    const edit = events.update({
      sessionUpdate: "tool_call",
      toolCallId: "e",
      title: "Edit",
      kind: "edit",
      status: "completed",
      content: [
        { type: "diff", path: `${WS}/src/a.ts`, oldText: "x", newText: "y" },
        { type: "diff", path: `${WS}/new.ts`, oldText: null, newText: "z" },
      ],
    });
    expect(edit.filter((e) => e.type === "file_changed")).toEqual([
      { type: "file_changed", path: "src/a.ts", action: "modified" },
      { type: "file_changed", path: "new.ts", action: "added" },
    ]);
  });

  it("a file written through caesar and then shown in its tool's diff is one file_changed, not two", () => {
    const events = new SessionEvents(WS);
    const written = events.wroteFile(`${WS}/src/a.ts`);
    const diff = events.update({
      sessionUpdate: "tool_call",
      toolCallId: "w",
      title: "Write",
      kind: "edit",
      status: "completed",
      content: [{ type: "diff", path: `${WS}/src/a.ts`, oldText: "x", newText: "y" }],
    });
    expect([...written, ...diff].filter((e) => e.type === "file_changed")).toEqual([
      { type: "file_changed", path: "src/a.ts" },
    ]);
  });

  it("a sandbox refusal in a failed tool is a finding; usage comes from the prompt's result (either shape)", async () => {
    const events = new SessionEvents(WS);
    events.update({
      sessionUpdate: "tool_call",
      toolCallId: "x",
      kind: "execute",
      title: "echo > a",
      status: "in_progress",
    });
    events.update({
      sessionUpdate: "tool_call_update",
      toolCallId: "x",
      status: "failed",
      content: [{ type: "content", content: { type: "text", text: "bash: a: Read-only file system" } }],
    });
    events.promptResult({ stopReason: "end_turn", usage: { inputTokens: 10, outputTokens: 5 } });
    events.promptResult({
      stopReason: "end_turn",
      _meta: { quota: { token_count: { input_tokens: 3, output_tokens: 2 } } },
    });
    const outcome = events.outcome({ code: 0, signal: null });
    expect(outcome.findings?.[0]?.title).toBe("Permission denied: shell");
    expect(outcome.usage).toEqual({ input_tokens: 13, output_tokens: 7 });
  });

  it("hostile updates never throw and only ever make valid events", () => {
    const events = new SessionEvents(WS);
    const hostile: unknown[] = [
      null,
      7,
      "x",
      [],
      {},
      { sessionUpdate: null },
      { sessionUpdate: "tool_call" },
      { sessionUpdate: "tool_call", toolCallId: { a: 1 }, status: "completed" },
      {
        sessionUpdate: "tool_call_update",
        toolCallId: "q",
        status: "completed",
        content: "nope",
        locations: 5,
        rawInput: [1, 2],
      },
      {
        sessionUpdate: "tool_call_update",
        toolCallId: "r",
        status: "in_progress",
        content: [null, 3, { type: "diff" }],
      },
      { sessionUpdate: "plan", entries: "x" },
      { sessionUpdate: "plan", entries: [null, { status: 4 }] },
      { sessionUpdate: "agent_message_chunk", content: null },
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "y".repeat(100_000) } },
      { sessionUpdate: "notice", severity: "error", title: 5 },
      { sessionUpdate: "usage_update", cost: { amount: "lots", currency: "USD" } },
      { sessionUpdate: "brand_new_update", whatever: true },
    ];
    const out = hostile.flatMap((update) => events.update(update));
    out.push(...(events.outcome({ code: null, signal: "SIGKILL" }).events ?? []));
    expect(invalidEvents(out)).toEqual([]);
    expect(pairingProblems(out)).toEqual([]);
  });
});
