import { CallerRequestSchema, FORMER_NAMES } from "../engine/lifecycle/request.js";
import { requestText } from "../support/request-strings.js";
import * as z from "../support/zod.js";
import { envelopeFields, TaskIdArgument } from "./envelope-fields.js";
import { MUTATE_PROTOCOL } from "./protocol-ids.js";

/**
 * The mutation vocabulary (`cz-mutate/1`): a separate envelope, the same strictness, a bearer token. Each
 * request carries the revision it was based on; the server refuses it (409) when what it acts on changed
 * after that revision — it never retries on the caller's behalf.
 */

const base = envelopeFields(MUTATE_PROTOCOL);

/**
 * The delegation request as a caller may send it — the same fields, names, validation and descriptions as
 * the MCP tools' (src/engine/lifecycle/request.ts): snake_case, durations as strings with a unit.
 */
export const DelegateArgumentsSchema = CallerRequestSchema.describe(
  "task.delegate: start a task, exactly as `caesar run --detach` would.",
);

export const CancelArgumentsSchema = z
  .strictObject({ task_id: TaskIdArgument })
  .describe("task.cancel: stop a task and its agent's whole process group.");

export const AnswerArgumentsSchema = z
  .strictObject({
    task_id: TaskIdArgument,
    question_id: TaskIdArgument.describe("The question's id (questions/<id>.json)."),
    answer: requestText(20_000).describe("The answer; the first answer wins."),
  })
  .describe("question.answer: answer a question an agent asked.");

/**
 * Arguments renamed when the vocabulary's arguments became snake_case like the rest of caesar's wire formats
 * (the envelope keeps the camelCase of the mutation protocol's specification), for the refusal of a caller who sends an old name.
 */
export const FORMER_ARGUMENTS: Readonly<Record<string, string>> = {
  ...FORMER_NAMES,
  taskId: "task_id",
  questionId: "question_id",
};

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
