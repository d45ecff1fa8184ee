import { ProcessOutcomeSchema } from "../../protocol/event.js";
import { NormalizedReportSchema, ReportStatusSchema } from "../../protocol/report.js";
import { IsolationSchema, ModeSchema } from "../../protocol/task.js";
import * as z from "../../support/zod.js";

/**
 * `state.json`: the orchestrator's record of a task beside the OACP files — lifecycle, processes,
 * isolation, outcome and the normalized report. Written atomically by the conductor (and, after the
 * task ended, by `apply`/`gc`/`cancel` under the task lock): caesar's copy in the control directory,
 * a mirror in the task directory that any process can read (see control.ts).
 */

export const PhaseSchema = z.enum(["queued", "preparing", "running", "finishing", "finished"]);
export type Phase = z.infer<typeof PhaseSchema>;

/** How the agent's process ended (beside the report's own status). */
export const OutcomeSchema = ProcessOutcomeSchema;
export type Outcome = z.infer<typeof OutcomeSchema>;

/** A process as recorded: pid plus its start time (from /proc), so a reused pid is not taken for it. */
export const ProcessRecordSchema = z.object({
  pid: z.number().int().positive(),
  start: z.string().optional(),
});
export type ProcessRecord = z.infer<typeof ProcessRecordSchema>;

export const SlotHolderSchema = z.object({ task_id: z.string(), pid: z.number().int(), since: z.string() });
export type SlotHolder = z.infer<typeof SlotHolderSchema>;

/**
 * One attempt of a remote task, as its claim in the cluster records it (cluster/wire.ts): worker, host,
 * start, end, and how it ended — `running`, an outcome, `retried`, `handed_back` (the worker's own fault)
 * or `lost` (the worker stopped answering) — with why, for all but `running` and `succeeded`.
 */
export const AttemptRecordSchema = z.object({
  attempt: z.number().int().positive(),
  worker: z.string(),
  host: z.string(),
  started_at: z.string(),
  ended_at: z.string().nullable(),
  outcome: z.string(),
  reason: z.string().nullable(),
});
export type AttemptRecord = z.infer<typeof AttemptRecordSchema>;

/**
 * A task sent to a pool of workers, as this machine follows it: the relay (engine/conductor/relay.ts)
 * mirrors what the worker publishes into the task directory, so every front end reads it like any task.
 */
export const RemoteStateSchema = z.object({
  /** The NATS servers (without credentials), for display. */
  servers: z.string(),
  queue: z.string(),
  git_remote: z.string(),
  /** The ref under which the starting point was pushed (refs/caesar/start/<id>), once it was. */
  start_ref: z.string().nullable().default(null),
  /** When the task was put in the queue (null: not yet). */
  submitted_at: z.string().nullable().default(null),
  /** The queue message's stream sequence (a cancel before any worker took the task removes it). */
  queue_seq: z.number().int().nullable().default(null),
  /**
   * The last sequence of the cluster's log stream just before the task was first sent to the queue: every
   * log message of the task has a higher one, so the relay starts reading there — no clock involved.
   * Null: not sent yet, or a state written before caesar recorded it (the relay then reads the task's
   * whole subject).
   */
  log_seq_before: z.number().int().nonnegative().nullable().default(null),
  worker: z.object({ id: z.string(), host: z.string() }).nullable().default(null),
  /** 1 for the first worker that took it; more after a worker was lost. */
  attempt: z.number().int().nonnegative().default(0),
  /** The agent's pid, on the worker's machine. */
  agent_pid: z.number().int().nullable().default(null),
  /** The worktree and branch, on the worker's machine. */
  worktree: z.string().nullable().default(null),
  branch: z.string().nullable().default(null),
  /** Workers lost while they ran the task. */
  lost: z.array(z.object({ worker: z.string(), attempt: z.number().int(), at: z.string() })).default([]),
  /**
   * Every attempt across workers, as the task's claim records it: worker, start, end, and how it ended
   * (running, an outcome, retried, handed_back, lost) with why.
   */
  attempts: z.array(AttemptRecordSchema).default([]),
});
export type RemoteState = z.infer<typeof RemoteStateSchema>;

export const TaskStateSchema = z.object({
  version: z.literal(1),
  id: z.string(),
  phase: PhaseSchema,
  created_at: z.string(),
  updated_at: z.string(),
  agent: z.string(),
  role: z.string().nullable().default(null),
  objective: z.string(),
  mode: ModeSchema,
  isolation: IsolationSchema,
  depth: z.number().int().nonnegative().default(0),
  parent_id: z.string().nullable().default(null),
  /** The project root this task belongs to. */
  root: z.string(),
  /** Where the agent works: the worktree, or the project directory for inplace tasks. */
  workspace: z.string(),
  worktree: z.string().nullable().default(null),
  branch: z.string().nullable().default(null),
  base_ref: z.string().nullable().default(null),
  /** Tree of the workspace when the task started (inplace: includes the user's uncommitted work). */
  start_tree: z.string().nullable().default(null),
  /** Tree of the workspace when the task ended, and a commit of it (kept under refs/caesar/tasks/<id>). */
  end_tree: z.string().nullable().default(null),
  result_commit: z.string().nullable().default(null),
  /** Paths the orchestrator materialised in the workspace, excluded from every diff (prefix semantics). */
  materialised: z.array(z.string()).default([]),
  /** Paths shared with the main tree through symlinks ([worktree] link). */
  linked: z.array(z.string()).default([]),
  conductor: ProcessRecordSchema.nullable().default(null),
  /**
   * The agent's keeper (the leader of its process group, engine/conductor/agent-process.ts), and which run
   * of the agent it is (1, then one more per further attempt) with when that run started: what a
   * conductor needs to take the agent over (its output files are numbered by run).
   */
  agent_process: ProcessRecordSchema.nullable().default(null),
  agent_turn: z.number().int().positive().nullable().default(null),
  agent_started_at: z.string().nullable().default(null),
  /** A check running after the agent (docs/checks.md), stopped by whoever finishes a dead conductor. */
  check_process: ProcessRecordSchema.nullable().default(null),
  /** A `[worktree] setup` command running before the agent, stopped by whoever takes the task over. */
  setup_process: ProcessRecordSchema.nullable().default(null),
  waiting_for_slot: z.array(SlotHolderSchema).nullable().default(null),
  command: z.string().nullable().default(null),
  started_at: z.string().nullable().default(null),
  finished_at: z.string().nullable().default(null),
  deadline_at: z.string().nullable().default(null),
  outcome: OutcomeSchema.nullable().default(null),
  exit: z
    .object({ code: z.number().int().nullable(), signal: z.string().nullable() })
    .nullable()
    .default(null),
  report_status: ReportStatusSchema.nullable().default(null),
  report: NormalizedReportSchema.nullable().default(null),
  /**
   * caesar's own last events of the task (its `error`, its `finished`): the `at` they carry and the `seq`
   * the first of them takes, recorded before they are appended. A conductor that ends the task again (the
   * last one died in between) appends only those not in events.jsonl yet — and never takes an agent's own
   * `finished` event for caesar's.
   */
  final_events: z.object({ seq: z.number().int().nonnegative(), at: z.string() }).nullable().default(null),
  /** Why the task could not run or was finished by someone else than its conductor. */
  error: z.object({ code: z.string(), message: z.string() }).nullable().default(null),
  cancel_requested: z.object({ at: z.string(), by: z.string() }).nullable().default(null),
  applied: z
    .object({ at: z.string(), by: z.string(), head: z.string().nullable(), files: z.array(z.string()) })
    .nullable()
    .default(null),
  /** When `caesar gc` removed the worktree and branch (the result commit stays under refs/caesar/). */
  cleaned_at: z.string().nullable().default(null),
  /**
   * SHA-256 (hex) of the credentials the conductor handed this task's agent (CAESAR_TASK_TOKEN). The
   * token itself is written nowhere; a nested request proves its parent by presenting it.
   */
  token_sha256: z.string().nullable().default(null),
  /** Sequential change number of this task's result (like a pull request number), assigned at creation. */
  change_number: z.number().int().positive().nullable().default(null),
  /** Set when the task runs on a pool of workers (see RemoteStateSchema). */
  remote: RemoteStateSchema.nullable().default(null),
});

export type TaskState = z.infer<typeof TaskStateSchema>;
export type TaskStateInput = z.input<typeof TaskStateSchema>;

/** Does the task keep its result apart from the working tree (a worktree here, or a remote worker's)? */
export function hasSeparateResult(state: Pick<TaskState, "worktree" | "remote">): boolean {
  return state.worktree !== null || state.remote !== null;
}

export function isTerminal(state: Pick<TaskState, "phase">): boolean {
  return state.phase === "finished";
}
