/** An attribute's value, as OpenTelemetry takes it (null and undefined are left out). */
export type AttributeValue = string | number | boolean | string[] | number[] | undefined | null;

/** A span as caesar records it once its work is over: its times, ids and what it says. */
export interface SpanRecord {
  name: string;
  kind?: "internal" | "client";
  traceId: string;
  /** Decided beforehand (a task's span, named in its plan), else a new random id. */
  spanId?: string;
  parentSpanId: string | null;
  /** Milliseconds since the epoch. */
  start: number;
  end: number;
  attributes: Record<string, AttributeValue>;
  events?: { name: string; at: number; attributes?: Record<string, AttributeValue> }[];
  /** Set when the work failed: the span's status is then ERROR, with this message. */
  error?: string;
}
