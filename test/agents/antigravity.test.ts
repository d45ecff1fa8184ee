import { describe, expect, it } from "vitest";
import { antigravityAdapter } from "../../src/agents/antigravity.js";
import { describeEnding, synthesizeReport } from "../../src/engine/conductor/ending.js";
import type { EventBody } from "../../src/protocol/event.js";
import { scratchLaunch } from "../helpers/replay.js";

/**
 * agy's stream as it comes (1.2.x): the kind under `event`, a step's fields nested under `step_update`
 * with its `state`, text in `text_delta` fragments, and one `result` whose error is a plain string.
 * No agy binary can run here: these lines follow recorded runs' shape.
 */
const line = (value: unknown) => JSON.stringify(value);
const STEP = (fields: Record<string, unknown>) =>
  line({ event: "step_update", step_update: { conversation_id: "c1", ...fields } });

async function replay(lines: string[], exit = { code: 0, signal: null }) {
  const launch = scratchLaunch(antigravityAdapter);
  const translator = antigravityAdapter.createTranslator(launch);
  const events: EventBody[] = [];
  for (const text of lines) events.push(...translator.stdout(text));
  const outcome = await translator.finish(exit);
  return { events: [...events, ...(outcome.events ?? [])], outcome };
}

describe("the antigravity (agy) stream", () => {
  it("turns a result with status ERROR and a plain-string error into a failure, with one error event", async () => {
    const quota =
      "Individual quota reached. Contact your administrator to enable overages. Resets in 71h15m27s.";
    const { events, outcome } = await replay([
      line({ event: "init", conversation_id: "c1", init: { model: "gemini-3-flash" } }),
      STEP({ step_index: 0, state: "DONE", step_type: "user_input", text_delta: "the brief" }),
      STEP({ step_index: 1, state: "ERROR", step_type: "agent_response", text_delta: "" }),
      line({
        event: "result",
        result: { conversation_id: "c1", status: "ERROR", response: "", error: quota },
      }),
    ]);
    expect(outcome.failure).toMatchObject({ code: "rate_limited", announced: true });
    expect(events.filter((event) => event.type === "error")).toEqual([
      { type: "error", message: `The model provider is rate limiting: ${quota}`, code: "rate_limited" },
    ]);
    // The engine then fails the task (never "partial: exited 0 without a report") and writes no second error.
    const ending = describeEnding(
      { kind: "exited", exit: { code: 0, signal: null }, streamFailure: outcome.failure },
      { agent: "antigravity", timeoutMs: 60_000, outputTail: "" },
    );
    expect(ending.announced).toBe(true);
    expect(synthesizeReport(ending, 0)).toMatchObject({
      status: "failed",
      summary: expect.stringContaining("Individual quota reached"),
    });
  });

  it("joins text fragments into one message, skips the echoed prompt, and pairs tool steps", async () => {
    const { events, outcome } = await replay([
      STEP({ step_index: 0, state: "DONE", step_type: "user_input", text_delta: "the brief" }),
      STEP({ step_index: 1, state: "DONE", step_type: "system_message", text_delta: "Session ready." }),
      STEP({
        step_index: 2,
        state: "ACTIVE",
        step_type: "tool",
        tool_name: "run_command",
        tool_info: { command: "ls" },
      }),
      STEP({
        step_index: 2,
        state: "DONE",
        step_type: "tool",
        tool_name: "run_command",
        tool_info: { command: "ls" },
      }),
      STEP({ step_index: 3, state: "ACTIVE", step_type: "agent_response", text_delta: "Gemini " }),
      STEP({ step_index: 3, state: "ACTIVE", step_type: "agent_response", text_delta: "ans" }),
      STEP({ step_index: 3, state: "DONE", text_delta: "wer" }),
      line({
        event: "result",
        result: {
          status: "SUCCESS",
          response: "Gemini answer",
          usage: { input_tokens: 17, output_tokens: 9 },
        },
      }),
    ]);
    expect(events.filter((event) => event.type === "message")).toEqual([
      { type: "message", text: "Gemini answer", role: "assistant" },
    ]);
    expect(
      events.filter((event) => event.type === "tool_use").map((event) => "status" in event && event.status),
    ).toEqual(["started", "succeeded"]);
    expect(outcome.failure).toBeUndefined();
    expect(outcome.usage).toEqual({ input_tokens: 17, output_tokens: 9 });
  });
});
