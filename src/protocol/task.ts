import * as z from "../support/zod.js";
import { ModeSchema } from "./choices.js";
import { TASK_ID_PATTERN } from "./ids.js";
import { PROTOCOLS } from "./versions.js";

export { type Mode, ModeSchema } from "./choices.js";

export const IsolationSchema = z
  .enum(["inplace", "worktree"])
  .describe("worktree: a fresh git worktree under .caesar/wt/<id>; inplace: the workspace itself.");
export type Isolation = z.infer<typeof IsolationSchema>;

/** Where the per-task return channel (an MCP stdio server) can be started, when the task has one. */
export const ChannelSchema = z
  .object({
    transport: z.literal("mcp-stdio"),
    command: z.string().min(1),
    args: z.array(z.string()).default([]),
    tools: z.array(z.string()).default([]),
  })
  .describe("Return channel coordinates: an MCP server the agent may start over stdio.");
export type Channel = z.infer<typeof ChannelSchema>;

const isoDate = z.iso.datetime({ offset: true });

export const TaskSchema = z
  .object({
    protocol: z.literal(PROTOCOLS.task),
    id: z.string().regex(TASK_ID_PATTERN).describe("The task id, also the name of its directory."),
    created_at: isoDate,
    role: z.string().nullable().optional().describe("The requested profile, if any."),
    agent: z.string().min(1).describe("The selected agent."),
    objective: z.string().min(1),
    context: z.string().default("").describe("Excerpts, history, links."),
    constraints: z.array(z.string()).default([]),
    acceptance_criteria: z.array(z.string()).default([]),
    mode: ModeSchema,
    isolation: IsolationSchema,
    network: z
      .boolean()
      .default(true)
      .describe("Is the network available? false only when the orchestrator knows it is cut."),
    workspace: z.string().min(1).describe("Absolute path of the working root."),
    base_ref: z
      .string()
      .nullable()
      .default(null)
      .describe("SHA of the starting commit, frozen when the task starts (null outside git)."),
    deadline_ms: z
      .number()
      .int()
      .positive()
      .nullable()
      .default(null)
      .describe("Time allowed, in milliseconds."),
    depth: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe("Delegation depth: 0 is the main agent (never a task), 1 a task it started, +1 per nesting."),
    report_path: z.string().min(1),
    events_path: z.string().min(1),
    channel: ChannelSchema.nullable().default(null),
  })
  .describe("caesar.task/v1: the task an orchestrator hands to an agent.");

export type Task = z.infer<typeof TaskSchema>;
export type TaskInput = z.input<typeof TaskSchema>;
