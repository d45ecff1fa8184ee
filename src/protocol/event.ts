import * as z from "../support/zod.js";
import { ToolPreviewSchema } from "./questions.js";
import { ChangeActionSchema, ReportStatusSchema } from "./report.js";
import { PROTOCOLS } from "./versions.js";

const common = {
  protocol: z.literal(PROTOCOLS.event),
  seq: z.number().int().nonnegative(),
  at: z.iso.datetime({ offset: true }).describe("ISO-8601 timestamp of the event (UTC `Z` or an offset)."),
  task_id: z.string().min(1),
};

/** How the agent's process ended, beside the report's status. */
export const ProcessOutcomeSchema = z.enum(["succeeded", "failed", "cancelled", "timed_out"]);
export type ProcessOutcome = z.infer<typeof ProcessOutcomeSchema>;

export const ToolStatusSchema = z.enum(["started", "succeeded", "failed"]);
export type ToolStatus = z.infer<typeof ToolStatusSchema>;

export const StartedEventSchema = z.object({
  ...common,
  type: z.literal("started"),
  agent: z.string(),
  command: z.string().optional(),
  pid: z.number().int().optional(),
});

export const ThinkingEventSchema = z.object({ ...common, type: z.literal("thinking"), text: z.string() });

export const MessageEventSchema = z.object({
  ...common,
  type: z.literal("message"),
  text: z.string(),
  role: z.string().optional(),
});

export const ToolUseEventSchema = z.object({
  ...common,
  type: z.literal("tool_use"),
  tool: z
    .string()
    .describe("The tool's name; may be empty on an end event when the agent's stream omits it."),
  id: z.string().default("").describe("The agent's call id, pairing a tool's start and end."),
  input_summary: z.string().optional(),
  status: ToolStatusSchema,
  output_summary: z.string().optional(),
  exit_code: z.number().int().nullable().optional(),
  duration_ms: z.number().nonnegative().optional(),
});

export const FileChangedEventSchema = z.object({
  ...common,
  type: z.literal("file_changed"),
  path: z.string(),
  action: ChangeActionSchema.optional().describe(
    "As in a report's changes; absent when the agent cannot tell.",
  ),
});

/** One step of an agent's own plan, as it last stated it. */
export const PlanStepSchema = z.object({
  content: z.string(),
  status: z.enum(["pending", "in_progress", "completed"]),
});
export type PlanStep = z.infer<typeof PlanStepSchema>;

/** How full the agent's context window is, as the agent itself says (ACP's `usage_update`). */
export const ContextUsageSchema = z.object({
  used_tokens: z.number().int().nonnegative().describe("Tokens in the agent's context now."),
  window_tokens: z.number().int().positive().describe("Its context window's size, as the agent states it."),
  cost_usd: z.number().nonnegative().optional().describe("What the agent's session has cost so far."),
});
export type ContextUsage = z.infer<typeof ContextUsageSchema>;

export const ProgressEventSchema = z.object({
  ...common,
  type: z.literal("progress"),
  message: z.string(),
  pct: z.number().min(0).max(100).optional(),
  plan: z
    .array(PlanStepSchema)
    .optional()
    .describe("The agent's whole plan when this progress is a plan update (each replaces the last)."),
  output: z
    .object({
      tool_id: z.string().min(1).describe("The running tool's id (its tool_use events' id)."),
      text: z.string().describe("The end of its output so far (at most 8 KiB)."),
    })
    .optional()
    .describe(
      "A running tool's output so far, when this progress is an output update (each replaces the last).",
    ),
  usage: ContextUsageSchema.optional().describe(
    "The agent's context and cost when this progress is a usage update (each replaces the last).",
  ),
});

export const QuestionEventSchema = z.object({
  ...common,
  type: z.literal("question"),
  question_id: z.string(),
  question: z.string(),
  options: z.array(z.string()).optional(),
  tool: ToolPreviewSchema.optional(),
});

export const AnswerEventSchema = z.object({
  ...common,
  type: z.literal("answer"),
  question_id: z.string(),
  answer: z.string(),
  by: z.string().optional(),
});

export const ErrorEventSchema = z.object({
  ...common,
  type: z.literal("error"),
  message: z.string(),
  code: z.string().optional(),
});

export const FinishedEventSchema = z.object({
  ...common,
  type: z.literal("finished"),
  status: ReportStatusSchema.describe("The report's status."),
  summary: z.string().optional(),
  outcome: ProcessOutcomeSchema.optional().describe("How the agent's process ended."),
  by: z
    .enum(["caesar", "agent"])
    .optional()
    .describe(
      "Who says it is finished. caesar's `finished` (by: caesar) is the task's end, the last event of the task; an agent may write its own (by: agent) — what the agent said of its work, never the task's end. caesar's readers mark each one from caesar's records, whatever the line claims.",
    ),
});

export const EventSchema = z
  .discriminatedUnion("type", [
    StartedEventSchema,
    ThinkingEventSchema,
    MessageEventSchema,
    ToolUseEventSchema,
    FileChangedEventSchema,
    ProgressEventSchema,
    QuestionEventSchema,
    AnswerEventSchema,
    ErrorEventSchema,
    FinishedEventSchema,
  ])
  .describe("caesar.event/v1: one line of events.jsonl.");

export type CaesarEvent = z.infer<typeof EventSchema>;
export type EventType = CaesarEvent["type"];
export const EVENT_TYPES = EventSchema.options.map((option) => option.shape.type.value) as EventType[];

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An event before the writer stamps it: no protocol, seq, at or task_id. */
export type EventBody = DistributiveOmit<z.input<typeof EventSchema>, "protocol" | "seq" | "at" | "task_id">;
