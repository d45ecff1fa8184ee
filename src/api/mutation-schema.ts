import { ModeSchema } from "../protocol/task.js";
import { requestName, requestText } from "../support/request-strings.js";
import * as z from "../support/zod.js";
import { envelopeFields, TaskIdArgument } from "./envelope-fields.js";
import { MUTATE_PROTOCOL } from "./protocol-ids.js";

/**
 * The mutation vocabulary (`cz-mutate/1`): a separate envelope, the same strictness, a bearer token. Each
 * request carries the revision it was based on; the server refuses it (409) when what it acts on changed
 * after that revision — it never retries on the caller's behalf.
 */

const base = envelopeFields(MUTATE_PROTOCOL);
const MAX_WEEK_MS = 7 * 24 * 3_600_000;

export const DelegateArgumentsSchema = z
  .strictObject({
    objective: requestText(20_000)
      .regex(/\S/, "the objective must say something")
      .describe("What the agent should do."),
    agent: requestName(128).optional().describe("The agent id (reference, codex, claude, …)."),
    role: requestName(128).optional().describe("A configured role instead of (or with) an agent."),
    mode: ModeSchema.optional(),
    isolation: z.enum(["auto", "inplace", "worktree"]).optional(),
    network: z.enum(["auto", "on", "off"]).optional(),
    timeoutMs: z.number().int().positive().max(MAX_WEEK_MS).optional().describe("Deadline in milliseconds."),
    model: requestName(256).optional(),
    context: requestText(200_000).optional(),
    constraints: z.array(requestText(2_000)).max(50).optional(),
    acceptance: z
      .array(requestText(2_000))
      .max(50)
      .optional()
      .describe("Acceptance criteria; one written `run: <command>` is a check."),
    checks: z
      .array(requestText(2_000))
      .max(20)
      .optional()
      .describe("Commands run in the task's worktree after the agent; each must exit 0 (docs/checks.md)."),
    checkTimeoutMs: z
      .number()
      .int()
      .positive()
      .max(MAX_WEEK_MS)
      .optional()
      .describe("Each check's deadline."),
    attempts: z.number().int().min(1).max(10).optional().describe("Attempts when checks fail (default 1)."),
    followUp: z.enum(["resume", "fresh"]).optional().describe("How a later attempt reaches the agent."),
  })
  .describe("task.delegate: start a task, exactly as `caesar run --detach` would.");

export const CancelArgumentsSchema = z
  .strictObject({ taskId: TaskIdArgument })
  .describe("task.cancel: stop a task and its agent's whole process group.");

export const AnswerArgumentsSchema = z
  .strictObject({
    taskId: TaskIdArgument,
    questionId: TaskIdArgument.describe("The question's id (questions/<id>.json)."),
    answer: requestText(20_000).describe("The answer; the first answer wins."),
  })
  .describe("question.answer: answer a question an agent asked.");

export const ApplyArgumentsSchema = z
  .strictObject({
    number: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).describe("The change number."),
    force: z.boolean().optional().describe("Apply again a change that was already applied."),
  })
  .describe("change.apply: bring a change into the working tree (three-way merge, staged).");

export const MutationRequestSchema = z
  .discriminatedUnion("operation", [
    z.strictObject({ ...base, operation: z.literal("task.delegate"), arguments: DelegateArgumentsSchema }),
    z.strictObject({ ...base, operation: z.literal("task.cancel"), arguments: CancelArgumentsSchema }),
    z.strictObject({ ...base, operation: z.literal("question.answer"), arguments: AnswerArgumentsSchema }),
    z.strictObject({ ...base, operation: z.literal("change.apply"), arguments: ApplyArgumentsSchema }),
  ])
  .describe(`${MUTATE_PROTOCOL} request envelope.`);

export type MutationRequest = z.infer<typeof MutationRequestSchema>;
export type MutationOperation = MutationRequest["operation"];
export const MUTATION_OPERATIONS = MutationRequestSchema.options.map(
  (option) => option.shape.operation.value,
) as MutationOperation[];

export function mutationRequestJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(MutationRequestSchema, { target: "draft-2020-12", io: "input" }) as Record<
    string,
    unknown
  >;
}
