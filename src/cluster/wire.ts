import {
  type AttemptRecord,
  AttemptRecordSchema,
  OutcomeSchema,
  PhaseSchema,
} from "../engine/store/state.js";
import { DEFAULT_RETRY, RetryPolicySchema, TaskPlanSchema } from "../engine/store/task-plan.js";
import { NormalizedReportSchema, ReportStatusSchema } from "../protocol/report.js";
import * as z from "../support/zod.js";

/**
 * The JSON documents caesar puts on NATS subjects and in KV entries. Every one is parsed with these
 * schemas where it is read: a message from the network is untrusted like any other input.
 */

const TASK_ID = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/, "a task id");
const COMMIT = z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/, "a commit id");

/** A task in the work queue (`caesar.tasks.<queue>.<agent>`). */
export const TaskMessageSchema = z.object({
  protocol: z.literal("caesar.cluster.task/v1"),
  task_id: TASK_ID,
  submitted_at: z.string(),
  submitter: z.object({ host: z.string(), root: z.string() }),
  /** Where the starting point is: a ref on the shared remote, and the commit it must name. */
  start: z.object({ ref: z.string(), commit: COMMIT, remote: z.string() }),
  /** The plan as the submitter resolved it; machine-specific paths are replaced by the worker's. */
  plan: TaskPlanSchema,
  on_worker_loss: z.enum(["retry", "fail"]),
  max_attempts: z.number().int().positive(),
  /** Transient failures: run again (absent from an older submitter's message: the defaults). */
  retry: RetryPolicySchema.default(DEFAULT_RETRY),
});
export type TaskMessage = z.infer<typeof TaskMessageSchema>;

export const WorkerRefSchema = z.object({ id: z.string(), host: z.string(), pid: z.number().int() });
export type WorkerRef = z.infer<typeof WorkerRefSchema>;

/** How a task ended on its worker: what the submitter's relay writes into its final state. */
export const FinalSchema = z.object({
  outcome: OutcomeSchema,
  exit: z.object({ code: z.number().int().nullable(), signal: z.string().nullable() }).nullable(),
  report_status: ReportStatusSchema.nullable(),
  /** Null when the agent never ran there (the relay then synthesises the report, as for a local task). */
  report: NormalizedReportSchema.nullable(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  started_at: z.string().nullable(),
  finished_at: z.string(),
  deadline_at: z.string().nullable(),
  command: z.string().nullable(),
  base_ref: z.string().nullable(),
  start_tree: z.string().nullable(),
  end_tree: z.string().nullable(),
  result_commit: z.string().nullable(),
  /** The last log message of this attempt: the relay mirrors up to it before it writes the final state. */
  log_seq: z.number().int().nonnegative(),
});
export type Final = z.infer<typeof FinalSchema>;

/** One attempt at a task, as its claim remembers it (the record is the task state's: engine/store/state.ts). */
export { type AttemptRecord, AttemptRecordSchema };

/**
 * A task's claim (`caesar-claims`, key = task id). The entry's KV revision is the fencing token: a worker
 * acts for the task only while the claim still has the revision it wrote.
 */
export const ClaimSchema = z.object({
  task_id: TASK_ID,
  /** `released`: its worker handed it back to the queue (a fault of its own, not the task's): the next one takes it afresh. */
  state: z.enum(["running", "finished", "released"]),
  attempt: z.number().int().positive(),
  worker: WorkerRefSchema,
  /** The queue message this claim is for (its stream sequence): another message for the task is a duplicate. */
  msg_seq: z.number().int().positive(),
  claimed_at: z.string(),
  lost: z.array(z.object({ worker: z.string(), attempt: z.number().int(), at: z.string() })).default([]),
  /** Workers that could not prepare the task for a fault of their own (their remote, their disk) and handed it back. */
  handed_back: z
    .array(z.object({ worker: z.string(), attempt: z.number().int(), at: z.string(), reason: z.string() }))
    .default([]),
  /** Every attempt so far, the current one last (attempt history across workers). */
  history: z.array(AttemptRecordSchema).default([]),
  final: FinalSchema.nullable().default(null),
});
export type Claim = z.infer<typeof ClaimSchema>;

/** What the worker's state.json says, as it changes (`caesar.log.<task>.state`). */
export const StateSnapshotSchema = z.object({
  phase: PhaseSchema,
  started_at: z.string().nullable(),
  deadline_at: z.string().nullable(),
  command: z.string().nullable(),
  agent_pid: z.number().int().nullable(),
  worktree: z.string().nullable(),
  branch: z.string().nullable(),
  base_ref: z.string().nullable(),
  start_tree: z.string().nullable(),
});
export type StateSnapshot = z.infer<typeof StateSnapshotSchema>;

/** A worker's record (`caesar-workers`, key = worker id). */
export const WorkerRecordSchema = z.object({
  id: z.string(),
  host: z.string(),
  pid: z.number().int(),
  queue: z.string(),
  agents: z.array(z.string()),
  max_parallel: z.number().int().positive(),
  running: z.array(z.string()),
  started_at: z.string(),
  heartbeat_at: z.string(),
  heartbeat_ms: z.number().int().positive(),
  draining: z.boolean().default(false),
  /** Set when the worker stopped taking tasks after failing too many in a row: since when, and why. */
  quarantined: z.object({ at: z.string(), reason: z.string() }).nullable().default(null),
});
export type WorkerRecord = z.infer<typeof WorkerRecordSchema>;

/**
 * A queue message a worker dropped (terminated: it is never delivered again) or refused (finished failed
 * without running): what it was, when, who, and why (`caesar-dropped`, key = its stream sequence).
 */
export const DroppedMessageSchema = z.object({
  seq: z.number().int().nonnegative(),
  subject: z.string(),
  at: z.string(),
  worker: z.string(),
  /** The task it named, when it could be read. */
  task_id: z.string().nullable(),
  /** `dropped` (never delivered again) or `refused` (the task finished failed, nothing ran). */
  action: z.enum(["dropped", "refused"]),
  reason: z.string(),
  /** Its size, and its first bytes (as text, for a look: it is untrusted). */
  bytes: z.number().int().nonnegative(),
  preview: z.string(),
});
export type DroppedMessage = z.infer<typeof DroppedMessageSchema>;

/** A cancel request (`caesar-control`, `<task>.cancel`). */
export const CancelRecordSchema = z.object({ at: z.string(), by: z.string() });

/** Parse JSON bytes with a schema; undefined when they are not valid. */
export function decode<T>(schema: z.ZodType<T>, bytes: Uint8Array): T | undefined {
  try {
    const parsed = schema.safeParse(JSON.parse(new TextDecoder().decode(bytes)));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export function encode(value: unknown): string {
  return JSON.stringify(value);
}
