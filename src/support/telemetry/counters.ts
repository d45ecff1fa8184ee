import * as z from "../zod.js";

/** What this process did with the spans it recorded (the conductor service reports them in its status). */
export const TelemetryCountersSchema = z.object({
  /** Spans a collector accepted. */
  exported: z.number().int().nonnegative(),
  /** Spans lost: the queue was full, or their export failed (collector down, slow, refusing). */
  dropped: z.number().int().nonnegative(),
  /** Exports that failed. */
  failed_exports: z.number().int().nonnegative(),
  /** Why the last export failed. */
  last_error: z.string().nullable(),
});
export type TelemetryCounters = z.infer<typeof TelemetryCountersSchema>;

export function makeCounters(): TelemetryCounters {
  return { exported: 0, dropped: 0, failed_exports: 0, last_error: null };
}
