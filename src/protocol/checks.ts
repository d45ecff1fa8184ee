import * as z from "../support/zod.js";

/**
 * Checks: commands chosen by the person or the configuration (never by the agent), run by caesar in the
 * task's workspace after the agent exits. Their results travel in the normalized report, beside the
 * attempts the agent was given.
 */

export const CheckResultSchema = z
  .object({
    command: z.string().describe("The command, run with `sh -c` in the task's workspace."),
    exit_code: z
      .number()
      .int()
      .nullable()
      .describe("Its exit code; null when it was killed, could not start, or was not run."),
    duration_ms: z.number().int().nonnegative(),
    passed: z.boolean().describe("Exit code 0, within its deadline."),
    output_tail: z.string().describe("The end of its output (stdout and stderr interleaved), bounded."),
    timed_out: z.boolean().optional().describe("Killed at its deadline (--check-timeout, or the task's)."),
    error: z.string().optional().describe("Why it did not run to its end (not started, deadline passed…)."),
    output_bytes: z.number().int().nonnegative().optional().describe("How much it printed in all."),
    log: z.string().optional().describe("Its kept output, relative to the task directory (bounded)."),
    from: z.string().optional().describe("Who asked for it: request, acceptance, role:<name>, config."),
  })
  .describe("One check's result.");
export type CheckResult = z.infer<typeof CheckResultSchema>;

/** How an attempt reached the agent: its first run, its own session continued, or a new run. */
export const AttemptKindSchema = z.enum(["first", "resumed", "fresh"]);
export type AttemptKind = z.infer<typeof AttemptKindSchema>;

export const AttemptSchema = z
  .object({
    attempt: z.number().int().positive(),
    how: AttemptKindSchema.describe(
      "first: the task's run; resumed: the agent's own session continued with the failing checks; fresh: a new run whose brief carries the previous diff and the failures.",
    ),
    session: z.string().nullable().describe("The agent CLI's session id, when its stream gave one."),
    started_at: z.string(),
    finished_at: z.string(),
    outcome: z.enum(["succeeded", "failed", "cancelled", "timed_out"]).describe("How its process ended."),
    exit_code: z.number().int().nullable(),
    checks: z.array(CheckResultSchema),
    checks_passed: z
      .boolean()
      .nullable()
      .describe("Every check passed after this attempt (null: the task has no checks)."),
  })
  .describe("One run of the agent on the task, and the checks after it.");
export type Attempt = z.infer<typeof AttemptSchema>;

/** Where a task's checks stand: every one passed, one failed, or there are none. */
export type ChecksVerdict = { total: number; passed: number; state: "passed" | "failed" | "none" };

export function checksVerdict(checks: readonly CheckResult[] | undefined): ChecksVerdict {
  const total = checks?.length ?? 0;
  const passed = checks?.filter((check) => check.passed).length ?? 0;
  return { total, passed, state: total === 0 ? "none" : passed === total ? "passed" : "failed" };
}
