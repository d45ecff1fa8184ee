import { ExportResultCode } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace";
import { describe, expect, it } from "vitest";
import { BoundedSpanProcessor, MAX_QUEUED_SPANS } from "../../src/support/telemetry/bounded-processor.js";
import { makeCounters } from "../../src/support/telemetry/counters.js";

/** A collector as the processor sees it: each export answered by `answer` (or never, when it returns undefined). */
function exporter(answer: (batch: ReadableSpan[]) => "ok" | "fail" | undefined) {
  const batches: number[] = [];
  const held: (() => void)[] = [];
  const double: SpanExporter = {
    export(spans, done) {
      batches.push(spans.length);
      const result = answer(spans);
      if (result === "ok") done({ code: ExportResultCode.SUCCESS });
      else if (result === "fail")
        done({ code: ExportResultCode.FAILED, error: new Error("collector said no") });
      else held.push(() => done({ code: ExportResultCode.FAILED, error: new Error("timed out") }));
    },
    async shutdown() {},
  };
  return { double, batches, held };
}

const span = {} as ReadableSpan;

describe("the bounded span processor", () => {
  it("exports in batches, one export at a time, and counts what a collector accepted", async () => {
    const collector = exporter(() => "ok");
    const counters = makeCounters();
    const processor = new BoundedSpanProcessor(collector.double, counters);
    for (let i = 0; i < 600; i++) processor.onEnd(span);
    await processor.forceFlush();
    expect(collector.batches).toEqual([256, 256, 88]);
    expect(counters).toMatchObject({ exported: 600, dropped: 0, failed_exports: 0 });
  });

  it("counts a failed batch as dropped, with why", async () => {
    const collector = exporter(() => "fail");
    const counters = makeCounters();
    const processor = new BoundedSpanProcessor(collector.double, counters);
    for (let i = 0; i < 3; i++) processor.onEnd(span);
    await processor.forceFlush();
    expect(counters).toEqual({ exported: 0, dropped: 3, failed_exports: 1, last_error: "collector said no" });
  });

  it("a collector that never answers: the queue stays bounded, what does not fit is dropped and counted, onEnd never waits", async () => {
    const collector = exporter(() => undefined);
    const counters = makeCounters();
    const processor = new BoundedSpanProcessor(collector.double, counters);
    const extra = 100;
    // The first batch leaves the queue for the export that hangs; the queue then fills up again.
    for (let i = 0; i < MAX_QUEUED_SPANS + 256 + extra; i++) processor.onEnd(span);
    expect(collector.batches).toEqual([256]);
    expect(counters.dropped).toBe(extra);
    // The hung export ends (the exporter's timeout): its batch is dropped too, and the next one goes.
    collector.held.shift()!();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(counters.dropped).toBe(extra + 256);
    expect(collector.batches).toEqual([256, 256]);
  });
});
