import { randomHex } from "../random.js";
import * as z from "../zod.js";

/**
 * Where a task sits in its trace (W3C trace context): the trace it belongs to, its own span, and the span
 * it continues — its parent task's, or the `TRACEPARENT` of the program that started it. Decided when the
 * task is planned and recorded in its plan, so that whichever process conducts it (the conductor service,
 * the next one after a crash, a cluster worker) ends the same span.
 */
export const TraceContextSchema = z.object({
  trace_id: z.string().regex(/^[0-9a-f]{32}$/),
  span_id: z.string().regex(/^[0-9a-f]{16}$/),
  parent_span_id: z
    .string()
    .regex(/^[0-9a-f]{16}$/)
    .nullable(),
});
export type TraceContext = z.infer<typeof TraceContextSchema>;

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ALL_ZERO = /^0+$/;

/** The trace and span a `traceparent` names (W3C Trace Context, version 00 and later), or undefined. */
export function parseTraceparent(raw: string | undefined): { traceId: string; spanId: string } | undefined {
  const match = raw?.trim().toLowerCase().match(TRACEPARENT);
  if (!match) return undefined;
  const [, version, traceId, spanId] = match as unknown as [string, string, string, string];
  if (version === "ff" || ALL_ZERO.test(traceId) || ALL_ZERO.test(spanId)) return undefined;
  return { traceId, spanId };
}

/** The `traceparent` of a task's span (sampled: caesar records every task it traces). */
export function formatTraceparent(context: Pick<TraceContext, "trace_id" | "span_id">): string {
  return `00-${context.trace_id}-${context.span_id}-01`;
}

/** A new task's place: under its parent task's span, else under the caller's `TRACEPARENT`, else a new trace. */
export function makeTraceContext(
  parent: Pick<TraceContext, "trace_id" | "span_id"> | null,
  traceparent?: string,
): TraceContext {
  const caller = parent ? undefined : parseTraceparent(traceparent);
  return {
    trace_id: parent?.trace_id ?? caller?.traceId ?? makeId(16),
    span_id: makeId(8),
    parent_span_id: parent?.span_id ?? caller?.spanId ?? null,
  };
}

/** A random id of `bytes` bytes, never all zero (an invalid id in W3C trace context). */
function makeId(bytes: number): string {
  const id = randomHex(bytes);
  return ALL_ZERO.test(id) ? makeId(bytes) : id;
}
