import { IsolationRequestSchema, TriStateNetworkSchema } from "../config/schema.js";
import type { DelegationRequest } from "../engine/lifecycle/request.js";
import { ModeSchema } from "../protocol/task.js";
import { parseDuration } from "../support/duration.js";
import * as z from "../support/zod.js";

/** What the objective-level options of a delegation look like to a model (shared by delegate, fan-out, race). */
export const DelegationOptionsShape = {
  mode: ModeSchema.optional().describe(
    "read-only: the agent must not change files; write (default): it may.",
  ),
  network: TriStateNetworkSchema.optional().describe(
    "auto (default), on or off — resolved against what the agent can really control.",
  ),
  context: z
    .string()
    .optional()
    .describe(
      "Background the agent needs: excerpts, history, links. It sees nothing else of your conversation.",
    ),
  constraints: z
    .array(z.string())
    .optional()
    .describe('Rules it must follow, e.g. "Do not touch the public API".'),
  acceptance_criteria: z
    .array(z.string())
    .optional()
    .describe(
      'How the result will be judged, e.g. "npm test passes". A `success` report claims they are met. One written "run: <command>" is a check (see `checks`).',
    ),
  checks: z
    .array(z.string().max(2000))
    .max(20)
    .optional()
    .describe(
      "Commands caesar runs in the task's worktree after the agent exits, e.g. [\"npm test\"]: each must exit 0, or a `success` report becomes `partial`. The project's configured checks apply too.",
    ),
  check_timeout: z
    .string()
    .optional()
    .describe("Each check's deadline, with a unit (default 10m), never past the task's."),
  attempts: z
    .number()
    .int()
    .min(1)
    .max(10)
    .optional()
    .describe(
      "When checks fail, give the same agent up to this many attempts in all (default 1), each with the failing checks' output.",
    ),
  follow_up: z
    .enum(["resume", "fresh"])
    .optional()
    .describe(
      "How a later attempt reaches the agent: resume (default) its own session where its CLI can, or fresh, a new run whose brief carries the diff so far.",
    ),
  model: z.string().optional().describe("The model for the agent, when it lets caesar choose."),
  timeout: z
    .string()
    .optional()
    .describe(
      "Time allowed, with a unit: 90s, 20m, 1h30m (default: the role's, else [policy] timeout, 30m).",
    ),
  channel: z
    .boolean()
    .optional()
    .describe(
      "Give the agent the return channel (default false): it can then report progress, ask you questions (answer with caesar_answer) and submit its report through MCP.",
    ),
};

/** One whole delegation: what, to whom, how. */
export const DelegationShape = {
  objective: z.string().trim().min(1).describe("What the agent should do, self-contained."),
  agent: z.string().optional().describe("The agent (see caesar_list_agents). Give this or `role`."),
  role: z
    .string()
    .optional()
    .describe("A configured role (see caesar_list_roles): picks the agent and its defaults."),
  isolation: IsolationRequestSchema.optional().describe(
    "auto (default: a fresh git worktree for writes, in place for read-only), worktree, or inplace.",
  ),
  ...DelegationOptionsShape,
};

export const DelegationSchema = z.object(DelegationShape);
export type DelegationArgs = z.infer<typeof DelegationSchema>;
type OptionsArgs = {
  [K in keyof typeof DelegationOptionsShape]?: z.infer<(typeof DelegationOptionsShape)[K]>;
};

/** Turn validated tool arguments into the engine's request (nested or not is the caller's proof: resolvePlan). */
export function toDelegationRequest(
  args: OptionsArgs & {
    objective: string;
    agent?: string;
    role?: string;
    isolation?: DelegationArgs["isolation"];
  },
): DelegationRequest {
  return {
    objective: args.objective,
    ...(args.agent ? { agent: args.agent } : {}),
    ...(args.role ? { role: args.role } : {}),
    ...(args.mode ? { mode: args.mode } : {}),
    ...(args.isolation ? { isolation: args.isolation } : {}),
    ...(args.network ? { network: args.network } : {}),
    ...(args.timeout ? { timeoutMs: parseDuration(args.timeout, "timeout") } : {}),
    ...(args.model ? { model: args.model } : {}),
    ...(args.context !== undefined ? { context: args.context } : {}),
    constraints: args.constraints ?? [],
    acceptance: args.acceptance_criteria ?? [],
    ...(args.checks ? { checks: args.checks } : {}),
    ...(args.check_timeout ? { checkTimeoutMs: parseDuration(args.check_timeout, "check_timeout") } : {}),
    ...(args.attempts !== undefined ? { attempts: args.attempts } : {}),
    ...(args.follow_up ? { followUp: args.follow_up } : {}),
    extraArgs: [],
    channel: args.channel === true,
    requestedBy: "mcp",
  };
}
