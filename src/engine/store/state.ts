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
  agent_process: ProcessRecordSchema.nullable().default(null),
  /** A check running after the agent (docs/checks.md), stopped by whoever concludes a dead conductor. */
  check_process: ProcessRecordSchema.nullable().default(null),
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
  /** Why the task could not run or was concluded by someone else than its conductor. */
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
});

export type TaskState = z.infer<typeof TaskStateSchema>;
export type TaskStateInput = z.input<typeof TaskStateSchema>;

export function isTerminal(state: Pick<TaskState, "phase">): boolean {
  return state.phase === "finished";
}
