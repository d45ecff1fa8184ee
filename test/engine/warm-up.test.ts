import { describe, expect, it } from "vitest";
import { parseConfigText } from "../../src/config/load.js";
import { TaskPlanSchema } from "../../src/engine/plan.js";
import { TaskStateSchema } from "../../src/engine/state.js";
import { WARM_UP_SAMPLES, warmUp } from "../../src/engine/warm-up.js";
import { safeParseDocument } from "../../src/protocol/documents.js";

// The startup snapshots' warm-up parses these samples: they must stay valid as the schemas evolve, or the
// warm-up would stop early and the snapshots would lose what it saves.
describe("the startup snapshots' warm-up samples", () => {
  it("are all valid documents", () => {
    expect(() => parseConfigText(WARM_UP_SAMPLES.config, "warm-up.toml")).not.toThrow();
    expect(TaskPlanSchema.safeParse(WARM_UP_SAMPLES.plan).success).toBe(true);
    expect(TaskStateSchema.safeParse(WARM_UP_SAMPLES.state).success).toBe(true);
    expect(safeParseDocument("task", WARM_UP_SAMPLES.task).ok).toBe(true);
    expect(safeParseDocument("report", WARM_UP_SAMPLES.report).ok).toBe(true);
    const events = WARM_UP_SAMPLES.events.map((event) => safeParseDocument("event", event).ok);
    expect(events.length).toBeGreaterThan(0);
    expect(events.every(Boolean)).toBe(true);
  });

  it("run through the warm-up without an error", () => {
    expect(() => warmUp()).not.toThrow();
  });
});
