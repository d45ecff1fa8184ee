import {
  type Attributes,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from "@opentelemetry/api";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtobufExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { type IdGenerator, RandomIdGenerator, TracerProvider } from "@opentelemetry/sdk-trace";
import { PACKAGE_VERSION } from "../package-version.js";
import { BoundedSpanProcessor } from "./bounded-processor.js";
import type { TelemetryCounters } from "./counters.js";
import type { TelemetrySettings } from "./settings.js";
import type { SpanRecord } from "./span-record.js";

/** How long one export may take, its retries included: a collector that never answers costs this, in the background. */
const EXPORT_TIMEOUT_MS = 5000;

/**
 * The SDK's ids, except where a span's are decided already: a task's span id is in its plan (its children
 * name it as their parent before it ends, and another process may end it).
 */
class PlannedIdGenerator implements IdGenerator {
  private readonly random = new RandomIdGenerator();
  next: { traceId: string; spanId?: string } | undefined;
  generateTraceId(): string {
    return this.next?.traceId ?? this.random.generateTraceId();
  }
  generateSpanId(): string {
    return this.next?.spanId ?? this.random.generateSpanId();
  }
}

/** One collector's tracer: its exporter (by protocol), its resource, its bounded processor. */
export class SpanPipeline {
  private readonly ids = new PlannedIdGenerator();
  private readonly provider: TracerProvider;
  private readonly tracer;

  constructor(settings: TelemetrySettings, counters: TelemetryCounters, version = PACKAGE_VERSION) {
    const options = { url: settings.traces_url, timeoutMillis: EXPORT_TIMEOUT_MS };
    const exporter =
      settings.protocol === "http/json" ? new JsonExporter(options) : new ProtobufExporter(options);
    this.provider = new TracerProvider({
      resource: resourceFromAttributes({
        ...settings.resource_attributes,
        "service.name": settings.service_name,
        "service.version": version,
      }),
      idGenerator: this.ids,
      spanProcessors: [new BoundedSpanProcessor(exporter, counters)],
    });
    this.tracer = this.provider.getTracer("caesar", version);
  }

  /** Start and end one span as recorded (its times are the record's, not now). */
  record(span: SpanRecord): void {
    const parent = span.parentSpanId
      ? trace.setSpanContext(ROOT_CONTEXT, {
          traceId: span.traceId,
          spanId: span.parentSpanId,
          traceFlags: TraceFlags.SAMPLED,
          isRemote: true,
        })
      : ROOT_CONTEXT;
    // The generator is read synchronously inside startSpan: no other span can take these ids.
    this.ids.next = { traceId: span.traceId, ...(span.spanId ? { spanId: span.spanId } : {}) };
    let started: ReturnType<typeof this.tracer.startSpan>;
    try {
      started = this.tracer.startSpan(
        span.name,
        {
          kind: span.kind === "client" ? SpanKind.CLIENT : SpanKind.INTERNAL,
          startTime: span.start,
          attributes: span.attributes as Attributes,
        },
        parent,
      );
    } finally {
      this.ids.next = undefined;
    }
    for (const event of span.events ?? [])
      started.addEvent(event.name, (event.attributes ?? {}) as Attributes, event.at);
    if (span.error !== undefined) started.setStatus({ code: SpanStatusCode.ERROR, message: span.error });
    started.end(Math.max(span.end, span.start));
  }

  async flush(): Promise<void> {
    await this.provider.forceFlush();
  }
}
