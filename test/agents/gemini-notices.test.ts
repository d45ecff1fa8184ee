import { describe, expect, it } from "vitest";
import { geminiAdapter } from "../../src/agents/gemini.js";
import type { EventBody } from "../../src/protocol/event.js";
import { scratchLaunch } from "../helpers/replay.js";

/** gemini's `error` lines are non-fatal notices; their `severity` says which kind (headless docs). */
function notices(lines: Record<string, unknown>[]): EventBody[] {
  const translator = geminiAdapter.createTranslator(scratchLaunch(geminiAdapter));
  return lines.flatMap((line) => translator.stdout(JSON.stringify(line)));
}

describe("the gemini stream's error lines", () => {
  it("become error events whose code is the catalogue's, never the CLI's own severity word", () => {
    const events = notices([
      { type: "error", severity: "warning", message: "Loop detected, stopping" },
      { type: "error", severity: "error", message: "Tool registry failed to load" },
      { type: "error", severity: "fatal-ish", message: "Something new" },
    ]);
    expect(events).toEqual([
      { type: "error", message: "Loop detected, stopping", code: "warning" },
      { type: "error", message: "Tool registry failed to load", code: "agent_error" },
      { type: "error", message: "Something new" },
    ]);
  });
});
