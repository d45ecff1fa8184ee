import { parseConfigText } from "../config/load.js";
import { parseDocument } from "../protocol/documents.js";
import { TaskPlanSchema } from "./plan.js";
import { TaskStateSchema } from "./state.js";
import samples from "./warm-up-samples.json" with { type: "json" };

/**
 * Run the parsers of every file a task reads — its configuration, plan, state, task, report and events —
 * on realistic samples, while a startup snapshot is being built. zod compiles a validator the first time
 * a schema parses something, and V8 compiles each function the first time it runs: done here, both are
 * saved in the snapshot instead of being paid by every `caesar run` and every conductor (≈ 30 ms of each
 * task's start, measured). The samples are a real task's files (`warm-up.test.ts` keeps them valid).
 */
export function warmUp(): void {
  for (let round = 0; round < 2; round++) {
    parseConfigText(samples.config, "warm-up.toml");
    TaskPlanSchema.parse(samples.plan);
    TaskStateSchema.parse(samples.state);
    parseDocument("task", samples.task);
    parseDocument("report", samples.report);
    for (const event of samples.events) parseDocument("event", event);
    JSON.stringify(samples);
  }
}

export const WARM_UP_SAMPLES = samples;
