import * as z from "../support/zod.js";
import { AttemptSchema, CheckResultSchema } from "./checks.js";
import { PROTOCOLS } from "./versions.js";

export const ReportStatusSchema = z
  .enum(["success", "partial", "failed", "blocked"])
  .describe(
    "success: acceptance criteria met; partial: some work left (see next_steps); failed: no way forward; blocked: a decision outside the agent's scope is needed (see questions).",
  );
export type ReportStatus = z.infer<typeof ReportStatusSchema>;

export const ChangeActionSchema = z.enum(["added", "modified", "deleted", "renamed"]);
export type ChangeAction = z.infer<typeof ChangeActionSchema>;

export const ChangeSchema = z.object({
  path: z.string().min(1),
  action: ChangeActionSchema,
  /** For a rename: the path before (`path` is the path after). */
  from: z.string().min(1).optional().describe("For a renamed file: its path before the rename."),
  summary: z.string().optional(),
});
export type Change = z.infer<typeof ChangeSchema>;

export const CommandRunSchema = z.object({
  command: z.string(),
  exit_code: z.number().int().nullable().optional(),
});

export const SeveritySchema = z.enum(["info", "low", "medium", "high", "critical"]);
export type Severity = z.infer<typeof SeveritySchema>;

export const FindingSchema = z.object({
  severity: SeveritySchema,
  title: z.string().min(1),
  file: z.string().optional(),
  line: z.number().int().nonnegative().optional(),
  detail: z.string().optional(),
});
export type Finding = z.infer<typeof FindingSchema>;

export const ReportQuestionSchema = z.object({
  id: z.string().min(1),
  question: z.string().min(1),
  options: z.array(z.string()).optional(),
});

export const ArtifactSchema = z.object({
  path: z.string().min(1),
  description: z.string().optional(),
});

export const UsageSchema = z
  .object({
    input_tokens: z.number().nonnegative().optional(),
    output_tokens: z.number().nonnegative().optional(),
    duration_ms: z.number().nonnegative().optional(),
    cost_usd: z.number().nonnegative().optional(),
  })
  .describe("Tokens, time and cost the agent spent.");
export type Usage = z.infer<typeof UsageSchema>;

export const ReportSchema = z
  .object({
    protocol: z.literal(PROTOCOLS.report),
    task_id: z.string().optional(),
    status: ReportStatusSchema,
    summary: z.string().min(1),
    details: z.string().default(""),
    changes: z
      .array(ChangeSchema)
      .default([])
      .describe("The agent's declaration; the orchestrator checks it with git."),
    commands_run: z.array(CommandRunSchema).default([]),
    findings: z.array(FindingSchema).default([]),
    questions: z.array(ReportQuestionSchema).default([]),
    next_steps: z.array(z.string()).default([]),
    artifacts: z.array(ArtifactSchema).default([]),
    usage: UsageSchema.default({}),
  })
  .describe(
    "caesar.report/v1: the agent's account of its work. Only protocol, status and summary are required.",
  );

export type Report = z.infer<typeof ReportSchema>;
export type ReportInput = z.input<typeof ReportSchema>;

/** Which recovery tier produced a report (best first). */
export const ReportSourceSchema = z.enum([
  "channel",
  "native",
  "file",
  "fenced",
  "self-declared",
  "synthesized",
]);
export type ReportSource = z.infer<typeof ReportSourceSchema>;

/**
 * The orchestrator's normalized report: the agent's report with `changes` replaced by what git observed
 * (when the workspace is a git repository), findings added by reconciliation, where it came from, and what
 * caesar's own checks found (never the agent's word: an agent's `checks` or `attempts` are dropped).
 */
export const NormalizedReportSchema = ReportSchema.extend({
  task_id: z.string(),
  changes_verified_by: z.enum(["git", "declaration"]),
  report_source: ReportSourceSchema,
  checks: z
    .array(CheckResultSchema)
    .default([])
    .describe("The checks after the last attempt, run by caesar in the task's workspace."),
  attempts: z.array(AttemptSchema).default([]).describe("Every run of the agent on this task, in order."),
});
export type NormalizedReport = z.infer<typeof NormalizedReportSchema>;
