import { OutcomeSchema, PhaseSchema } from "../engine/store/state.js";
import { EventSchema } from "../protocol/event.js";
import { ChangeActionSchema, NormalizedReportSchema, ReportStatusSchema } from "../protocol/report.js";
import { IsolationSchema, ModeSchema } from "../protocol/task.js";
import * as z from "../support/zod.js";
import { AGENT_PROTOCOL, MUTATE_PROTOCOL, PROVENANCE } from "./protocol-ids.js";

/**
 * What `caesar serve` answers besides the query contract's results: the dashboard's reads (the task
 * list, a task, its diff), the messages of its two event streams, the session, a mutation's response,
 * and the error body. The server's code is typed by these schemas (summarizeTask returns a TaskSummary,
 * each stream message `satisfies` its type), the dashboard's JavaScript is type-checked against them
 * (web/, JSDoc types imported from here: `npm run typecheck`), and test/api/response-schema.test.ts parses
 * a real server's answers with them — strict objects, so a field added on one side only is caught.
 *
 * This module imports only zod and schemas (no Node): the dashboard's type check loads it without Node's
 * types.
 */

const Revision = z.number().int().nonnegative();

/**
 * Where a change (a task's result) stands, like a pull request's state: `running` until the task
 * finished; then `applied` once brought into the working tree, `in_place` when it ran in the working tree
 * itself, `empty` when git observed no change, else `ready` (to apply).
 */
export const ChangeStatusSchema = z.enum(["running", "ready", "applied", "in_place", "empty"]);
export type ChangeStatus = z.infer<typeof ChangeStatusSchema>;

/** Where a task's checks stand (protocol/checks.ts's checksVerdict). */
export const ChecksVerdictSchema = z.strictObject({
  total: z.number().int().nonnegative(),
  passed: z.number().int().nonnegative(),
  state: z.enum(["passed", "failed", "none"]),
});

/** One task as lists show it (the dashboard's task list, the task page's header). */
export const TaskSummarySchema = z.strictObject({
  id: z.string(),
  changeNumber: z.number().int().positive().nullable(),
  objective: z.string(),
  agent: z.string(),
  role: z.string().nullable(),
  mode: ModeSchema,
  isolation: IsolationSchema,
  phase: PhaseSchema,
  outcome: OutcomeSchema.nullable(),
  reportStatus: ReportStatusSchema.nullable(),
  changeStatus: ChangeStatusSchema,
  summary: z.string().nullable(),
  /** caesar's checks after the last attempt (`state: "none"` when the task has none). */
  checks: ChecksVerdictSchema,
  attempts: z.number().int().nonnegative(),
  error: z.strictObject({ code: z.string(), message: z.string() }).nullable(),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
  updatedAt: z.string(),
  branch: z.string().nullable(),
  worktree: z.string().nullable(),
  baseRef: z.string().nullable(),
  parentId: z.string().nullable(),
  depth: z.number().int().nonnegative(),
  /** What the agent reported it spent (its budget use), null where it said nothing. */
  costUsd: z.number().nonnegative().nullable(),
  inputTokens: z.number().nonnegative().nullable(),
  outputTokens: z.number().nonnegative().nullable(),
  applied: z
    .strictObject({ at: z.string(), by: z.string(), head: z.string().nullable(), files: z.array(z.string()) })
    .nullable(),
  cancelRequested: z.strictObject({ at: z.string(), by: z.string() }).nullable(),
  /** The tasks holding the slots this one waits for; null when it is not waiting. */
  waitingForSlot: z.array(z.string()).nullable(),
  /** The worker a remote task runs on (docs/cluster.md). */
  worker: z.string().nullable(),
  /** How many valid events its events.jsonl has. */
  events: z.number().int().nonnegative(),
  pendingQuestions: z.number().int().nonnegative(),
  revision: Revision,
});
export type TaskSummary = z.infer<typeof TaskSummarySchema>;

/** A question the task's agent asked, with its answer once there is one. */
export const TaskQuestionSchema = z.strictObject({
  id: z.string(),
  question: z.string(),
  options: z.array(z.string()).nullable(),
  askedAt: z.string(),
  answer: z
    .strictObject({ answer: z.string(), answeredAt: z.string(), answeredBy: z.string().nullable() })
    .nullable(),
});
export type TaskQuestion = z.infer<typeof TaskQuestionSchema>;

/** The task page: the summary, the normalized report (with its findings) and every question. */
export const TaskDescriptionSchema = z.strictObject({
  task: TaskSummarySchema,
  report: NormalizedReportSchema.nullable(),
  questions: z.array(TaskQuestionSchema),
});
export type TaskDescription = z.infer<typeof TaskDescriptionSchema>;

/** `GET /api/tasks/:id`, and the event stream's `task` message: a task described, at a revision. */
export const TaskPageSchema = z.strictObject({
  runId: z.string(),
  revision: Revision,
  ...TaskDescriptionSchema.shape,
});
export type TaskPage = z.infer<typeof TaskPageSchema>;

/** `GET /api/tasks?limit=&before=`: a page of tasks, newest change first. */
export const TaskListPageSchema = z.strictObject({
  runId: z.string(),
  revision: Revision,
  total: z.number().int().nonnegative(),
  tasks: z.array(TaskSummarySchema),
  /** The `before` of the next page, or null on the last one. */
  nextBefore: z.number().int().positive().nullable(),
});
export type TaskListPage = z.infer<typeof TaskListPageSchema>;

/** A verified diff: git's, between two trees. */
export const DiffSchema = z.strictObject({
  from: z.string(),
  to: z.string(),
  files: z.array(
    z.strictObject({ path: z.string(), action: ChangeActionSchema, from: z.string().optional() }),
  ),
  /** `git diff --binary --no-renames`, cut at MAX_PATCH_CHARS (then `truncated`). */
  patch: z.string(),
  truncated: z.boolean(),
});
export type Diff = z.infer<typeof DiffSchema>;

/** `GET /api/tasks/:id/diff`: the task's verified diff, or why there is none. */
export const TaskDiffSchema = z.strictObject({
  taskId: z.string(),
  diff: DiffSchema.nullable(),
  /** Where it was computed from: the trees recorded when the task ended, or its workspace now. */
  origin: z.enum(["recorded", "worktree", "workspace", "result-commit"]).nullable(),
  unavailable: z.string().nullable(),
});
export type TaskDiff = z.infer<typeof TaskDiffSchema>;

/** Every event stream's first message (on every connection): the run and revision it starts from. */
export const StreamHelloSchema = z.strictObject({ runId: z.string(), revision: Revision });
export type StreamHello = z.infer<typeof StreamHelloSchema>;

/** `GET /api/stream`'s `tasks` message: the summaries of the tasks that changed, and those removed. */
export const TasksUpdateSchema = z.strictObject({
  runId: z.string(),
  revision: Revision,
  tasks: z.array(TaskSummarySchema),
  removed: z.array(z.string()),
});
export type TasksUpdate = z.infer<typeof TasksUpdateSchema>;

/**
 * `GET /api/tasks/:id/events`'s `caesar` message (SSE id = ordinal): one event of the task, by its
 * 1-based position among the valid events; null when its line is gone (events.jsonl rewritten).
 */
export const TaskEventMessageSchema = z.strictObject({
  ordinal: z.number().int().positive(),
  event: EventSchema.nullable(),
});
export type TaskEventMessage = z.infer<typeof TaskEventMessageSchema>;

/** `GET /api/session`: whether this browser's session may act, and how to log in when it may not. */
export const SessionSchema = z.strictObject({
  authenticated: z.boolean(),
  /** The header a mutation carries the session's CSRF secret in. */
  csrfHeader: z.string(),
  /** How to log in, when not authenticated. */
  login: z.string().nullable(),
  runId: z.string(),
  revision: Revision,
  mutate: z.strictObject({ protocol: z.literal(MUTATE_PROTOCOL), path: z.string() }),
});
export type Session = z.infer<typeof SessionSchema>;

/**
 * `GET /api/agent/v1`: the query contract's capabilities. Only what the dashboard reads is schematised
 * here; the whole document is described in docs/api.md.
 */
export const AgentCapabilitiesSchema = z.looseObject({
  protocol: z.literal(AGENT_PROTOCOL),
  runId: z.string(),
  revision: Revision,
  repositories: z.strictObject({ project: z.string(), worktrees: z.string() }),
});
export type AgentCapabilities = z.infer<typeof AgentCapabilitiesSchema>;

/** One problem of a request body: where (a JSON path) and what. */
export const RequestIssueSchema = z.strictObject({ path: z.string(), message: z.string() });

/**
 * Every error response: what went wrong, the current run and revision, and — for a request of either
 * vocabulary — its protocol and its requestId (null when the request had no valid one).
 */
export const ErrorResponseSchema = z.strictObject({
  protocol: z.string().optional(),
  requestId: z.string().nullable().optional(),
  runId: z.string(),
  revision: Revision,
  error: z.strictObject({
    code: z.string(),
    summary: z.string(),
    detail: z.string(),
    issues: z.array(RequestIssueSchema).optional(),
  }),
});
export type ErrorResponse = z.infer<typeof ErrorResponseSchema>;

/** The result of each mutation (cz-mutate/1), by operation. */
export const DelegateResultSchema = z.strictObject({
  taskId: z.string(),
  changeNumber: z.number().int().positive().nullable(),
  task: TaskSummarySchema.nullable(),
});
export const CancelResultSchema = z.strictObject({
  taskId: z.string(),
  /** false when the task had ended already. */
  cancelled: z.boolean(),
  phase: PhaseSchema,
  outcome: OutcomeSchema.nullable(),
});
export const AnswerResultSchema = z.strictObject({
  taskId: z.string(),
  questionId: z.string(),
  answeredAt: z.string(),
  answeredBy: z.string().nullable(),
});
export const ApplyResultSchema = z.strictObject({
  number: z.number().int().positive(),
  taskId: z.string(),
  files: z.array(z.string()),
  head: z.string(),
  /** The working tree the change was staged in. */
  stagedIn: z.string(),
});
export type DelegateResult = z.infer<typeof DelegateResultSchema>;
export type CancelResult = z.infer<typeof CancelResultSchema>;
export type AnswerResult = z.infer<typeof AnswerResultSchema>;
export type ApplyResult = z.infer<typeof ApplyResultSchema>;

const mutationResponse = <O extends string, R extends z.ZodType>(operation: O, result: R) =>
  z.strictObject({
    protocol: z.literal(MUTATE_PROTOCOL),
    requestId: z.string(),
    runId: z.string(),
    /** The revision the request was based on. */
    basedOn: Revision,
    revision: Revision,
    provenance: z.literal(PROVENANCE),
    operation: z.literal(operation),
    result,
  });

/** `POST /api/mutate/v1/request`'s answer to a request that was carried out. */
export const MutationResponseSchema = z.discriminatedUnion("operation", [
  mutationResponse("task.delegate", DelegateResultSchema),
  mutationResponse("task.cancel", CancelResultSchema),
  mutationResponse("question.answer", AnswerResultSchema),
  mutationResponse("change.apply", ApplyResultSchema),
]);
export type MutationResponse = z.infer<typeof MutationResponseSchema>;
export type MutationOperation = MutationResponse["operation"];
/** The response to a mutation of `operation`. */
export type MutationResponseOf<O extends MutationOperation> = Extract<MutationResponse, { operation: O }>;
