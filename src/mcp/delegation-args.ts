import {
  CALLER_FIELDS,
  CallerRequestSchema,
  type DelegationRequest,
  parseArguments,
  parseDelegationRequest,
  type Spelling,
  wireSpelling,
} from "../engine/lifecycle/request.js";
import * as z from "../support/zod.js";

/**
 * The MCP tools' codec of the delegation request (src/engine/lifecycle/request.ts). Their argument names
 * are the request's own, so the codec renames nothing: its input schemas are built from the request's
 * fields, and its arguments go through the request's one parse — a bad one is refused with the same code
 * (`invalid_argument`, `unknown_field`) as on the command line and over HTTP.
 */

/** Each of caesar_fanout's tasks: the request as a caller may send it. */
export const DelegationArgumentsSchema = CallerRequestSchema;

/**
 * `wait`: the synchronous form of caesar_delegate and caesar_fanout — the call returns the agent's answer
 * (as the delegation reference's synchronous `delegate`) instead of ids to await. Not a field of the
 * request: it says how this call answers, not what the task is.
 */
export const WaitShape = {
  wait: z
    .boolean()
    .optional()
    .describe(
      "true: wait until the task has finished and return its result — `[Agent '<agent>' (<agent>/<model>)]` and its answer, or the error — instead of its id at once (default false). The task's own `timeout` bounds the wait; ending the session does not stop the task.",
    ),
};

/** caesar_delegate's arguments: the request as a caller may send it, and `wait`. */
export const DelegateToolSchema = CallerRequestSchema.extend(WaitShape);

/** Take `wait` out of a tool's arguments (checked), leaving the request's fields to its one parse. */
export function splitWait(args: unknown): { wait: boolean; rest: unknown } {
  if (args === null || typeof args !== "object" || Array.isArray(args) || !("wait" in args))
    return { wait: false, rest: args };
  const { wait, ...rest } = args as Record<string, unknown>;
  return { wait: parseToolArguments(z.strictObject(WaitShape), { wait }).wait ?? false, rest };
}

/**
 * The request's options shared by every contender of caesar_race: not agent or role (the contenders are
 * named by `agents`), not isolation (each contender works in its own worktree), not the objective (the
 * race's).
 */
export const RaceOptionsShape = CallerRequestSchema.omit({
  objective: true,
  agent: true,
  role: true,
  isolation: true,
}).shape;

/** The engine's request from a tool's arguments (nested or not is the caller's proof: resolvePlan). */
export function toDelegationRequest(
  args: unknown,
  spell: Spelling = wireSpelling,
  /** The tool's own schema, when it takes more than the request (its fields are what a refusal lists). */
  schema: z.ZodObject = CallerRequestSchema,
): DelegationRequest {
  return parseDelegationRequest(args, {
    accept: CALLER_FIELDS,
    known: Object.keys(schema.shape),
    set: { requested_by: "mcp" },
    spell,
  });
}

/** Parse a tool's arguments with its schema, refusing as the request's parse does. */
export function parseToolArguments<S extends z.ZodType>(schema: S, args: unknown): z.output<S> {
  return parseArguments(schema, args, wireSpelling);
}

/**
 * The input schema a tool registers: it publishes `schema` (what tools/list shows is exactly what the tool
 * accepts) but lets any object through the SDK to the tool's handler, which parses it with
 * `parseToolArguments`. The SDK's own validation would refuse a bad argument with a message of its own and
 * no code; caesar's parse refuses it as every other surface does.
 */
export function parsedByHandler(schema: z.ZodType) {
  const open = z.looseObject({});
  open._zod.toJSONSchema = () => {
    const { $schema: _, ...json } = z.toJSONSchema(schema, { target: "draft-7", io: "input" });
    return json;
  };
  return open;
}
