import { ExportResultCode } from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter, SpanProcessor } from "@opentelemetry/sdk-trace";
import { messageOf } from "../errors.js";
import type { TelemetryCounters } from "./counters.js";

/** Spans waiting for their export, at most; one more is dropped (and counted). */
export const MAX_QUEUED_SPANS = 2048;
const BATCH_SIZE = 256;
const EXPORT_DELAY_MS = 500;

/**
 * Spans to the exporter in batches, one export at a time, from a bounded queue: a collector that is down
 * or slow costs at most the queue's memory, never a task's time — a span that finds the queue full is
 * dropped, and so is a batch whose export failed (the exporter's own retries are bounded by its timeout);
 * both are counted. (The SDK's BatchSpanProcessor also bounds its queue, but does not say what it drops.)
 */
export class BoundedSpanProcessor implements SpanProcessor {
  private readonly queue: ReadableSpan[] = [];
  private exporting: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly exporter: SpanExporter,
    private readonly counters: TelemetryCounters,
  ) {}

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    if (this.queue.length >= MAX_QUEUED_SPANS) {
      this.counters.dropped++;
      return;
    }
    this.queue.push(span);
    if (this.queue.length >= BATCH_SIZE) void this.exportQueued();
    else this.timer ??= setTimeout(() => void this.exportQueued(), EXPORT_DELAY_MS).unref();
  }

  /** Export what is queued now, batch after batch. */
  async forceFlush(): Promise<void> {
    while (this.queue.length > 0 || this.exporting) await this.exportQueued();
  }

  async shutdown(): Promise<void> {
    await this.forceFlush();
    await this.exporter.shutdown();
  }

  private async exportQueued(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.exporting) return this.exporting;
    const batch = this.queue.splice(0, BATCH_SIZE);
    if (batch.length === 0) return;
    this.exporting = new Promise<void>((resolve) => {
      try {
        this.exporter.export(batch, (result) => {
          if (result.code === ExportResultCode.SUCCESS) this.counters.exported += batch.length;
          else {
            this.counters.dropped += batch.length;
            this.counters.failed_exports++;
            this.counters.last_error = result.error?.message ?? "export failed";
          }
          resolve();
        });
      } catch (error) {
        this.counters.dropped += batch.length;
        this.counters.failed_exports++;
        this.counters.last_error = messageOf(error);
        resolve();
      }
    }).finally(() => {
      this.exporting = undefined;
      if (this.queue.length > 0) this.timer ??= setTimeout(() => void this.exportQueued(), 0).unref();
    });
    return this.exporting;
  }
}
