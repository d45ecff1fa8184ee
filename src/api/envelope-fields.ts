import * as z from "../support/zod.js";

/** Fields every request envelope carries, in both vocabularies (the protocol literal differs). */
export function envelopeFields<P extends string>(protocol: P) {
  return {
    protocol: z.literal(protocol).describe(`Always "${protocol}".`),
    requestId: z.uuid().describe("A fresh UUID for every request; echoed in the response."),
    runId: z
      .uuid()
      .describe("The runId from GET /api/state: identifies the task store as this server indexes it."),
    revision: z
      .number()
      .int()
      .nonnegative()
      .max(Number.MAX_SAFE_INTEGER)
      .describe("The version from GET /api/state the request is based on."),
  };
}

/**
 * A task or question id, with the rules of `isValidTaskId` (ids become file names) written as one pattern,
 * so the JSON Schema says exactly what the server accepts: no refinement the schema could not express.
 */
export const ID_PATTERN = /^(?!.*\.\.)[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

export const TaskIdArgument = z
  .string()
  .regex(
    ID_PATTERN,
    "expected an id: 1–128 letters, digits, '_', '-' or '.', starting with a letter or digit",
  )
  .describe("A task id, e.g. t_7f3a9c21 (exact, not a prefix).");
