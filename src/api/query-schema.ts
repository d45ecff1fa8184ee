import { requestName } from "../support/request-strings.js";
import * as z from "../support/zod.js";
import { envelopeFields } from "./envelope-fields.js";
import { AGENT_PROTOCOL } from "./protocol-ids.js";

/**
 * The request envelope of the agent query contract (`cz-agent/1`): strict at every level (an unknown field
 * is an error), one branch per operation. GET /api/agent/v1/schema serves the JSON Schema generated from
 * this very object, and the server validates with it — the two cannot drift.
 */

const base = envelopeFields(AGENT_PROTOCOL);

export const TimelineArgumentsSchema = z
  .strictObject({
    actor: requestName(128)
      .optional()
      .describe('Only entries of this actor: an agent id, or "user" for answers, applies and cancels.'),
    repo: requestName(256)
      .optional()
      .describe("Only entries of this repository (the project's id, or a task's worktree id)."),
    before: z
      .number()
      .int()
      .positive()
      .max(Number.MAX_SAFE_INTEGER)
      .optional()
      .describe("Only entries older than this position (the nextBefore of the previous page)."),
    limit: z.number().int().min(1).max(100).optional().describe("Entries per page, 1–100 (default 50)."),
  })
  .describe("timeline.read: the events of all tasks, newest first.");

export const RepositoryArgumentsSchema = z
  .strictObject({
    id: requestName(256).describe(
      "A repository id: the project's (see capabilities), or a task id for that task's worktree.",
    ),
  })
  .describe("repository.read: metadata and a source snapshot.");

export const ChangeArgumentsSchema = z
  .strictObject({
    number: z
      .number()
      .int()
      .positive()
      .max(Number.MAX_SAFE_INTEGER)
      .describe("The change number (each task's sequential number, like a pull request's)."),
  })
  .describe("change.read: a task's result — report, verified diff and status.");

export const QueryRequestSchema = z
  .discriminatedUnion("operation", [
    z.strictObject({
      ...base,
      operation: z.literal("timeline.read"),
      arguments: TimelineArgumentsSchema,
    }),
    z.strictObject({
      ...base,
      operation: z.literal("repository.read"),
      arguments: RepositoryArgumentsSchema,
    }),
    z.strictObject({ ...base, operation: z.literal("change.read"), arguments: ChangeArgumentsSchema }),
  ])
  .describe(`${AGENT_PROTOCOL} request envelope.`);

export type QueryRequest = z.infer<typeof QueryRequestSchema>;
export type QueryOperation = QueryRequest["operation"];
export const QUERY_OPERATIONS = QueryRequestSchema.options.map(
  (option) => option.shape.operation.value,
) as QueryOperation[];

/** The JSON Schema (draft 2020-12) of the envelope, generated from the zod schema the server validates with. */
export function queryRequestJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(QueryRequestSchema, { target: "draft-2020-12", io: "input" }) as Record<
    string,
    unknown
  >;
}
