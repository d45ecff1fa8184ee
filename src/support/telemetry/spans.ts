import { messageOf } from "../errors.js";
import { makeCounters, type TelemetryCounters } from "./counters.js";
import type { TelemetrySettings } from "./settings.js";
import type { AttributeValue, SpanRecord } from "./span-record.js";

type Pipeline = import("./pipeline.js").SpanPipeline;

const counters = makeCounters();
/** One pipeline per collector and resource: tasks planned with different settings export apart. */
const pipelines = new Map<string, Promise<Pipeline | undefined>>();

/**
 * Hand a finished span to its collector's pipeline. Never waits and never throws: the SDK is loaded on the
 * first span (a process that traces nothing never loads it), and whatever goes wrong costs the span, counted.
 */
export function recordSpan(settings: TelemetrySettings, record: SpanRecord): void {
  const clean = { ...record, attributes: withoutEmpty(record.attributes) };
  void pipelineFor(settings).then((pipeline) => {
    if (!pipeline) {
      counters.dropped++;
      return;
    }
    try {
      pipeline.record(clean);
    } catch (error) {
      counters.dropped++;
      counters.last_error = messageOf(error);
    }
  });
}

/** Export what is queued, for at most `timeoutMs` (a process about to exit; a collector may never answer). */
export async function flushTelemetry(timeoutMs: number): Promise<void> {
  if (pipelines.size === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const flushed = Promise.all(
    [...pipelines.values()].map((pipeline) => pipeline.then((p) => p?.flush()).catch(() => undefined)),
  );
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, timeoutMs);
  });
  await Promise.race([flushed, timeout]);
  clearTimeout(timer);
}

/** Has this process recorded any span (a front end that did flushes before it exits)? */
export function hasRecordedSpans(): boolean {
  return pipelines.size > 0;
}

/** What this process did with its spans so far (a copy). */
export function telemetryCounters(): TelemetryCounters | null {
  return pipelines.size === 0 ? null : { ...counters };
}

function pipelineFor(settings: TelemetrySettings): Promise<Pipeline | undefined> {
  const key = JSON.stringify([
    settings.traces_url,
    settings.protocol,
    settings.service_name,
    Object.entries(settings.resource_attributes).sort(),
  ]);
  let pipeline = pipelines.get(key);
  if (!pipeline) {
    pipeline = import("./pipeline.js").then(
      ({ SpanPipeline }) => new SpanPipeline(settings, counters),
      (error: unknown) => {
        counters.last_error = `the OpenTelemetry SDK could not load: ${messageOf(error)}`;
        return undefined;
      },
    );
    pipelines.set(key, pipeline);
  }
  return pipeline;
}

function withoutEmpty(attributes: Record<string, AttributeValue>): Record<string, AttributeValue> {
  return Object.fromEntries(
    Object.entries(attributes).filter(([, value]) => value !== undefined && value !== null && value !== ""),
  );
}
