/** The return channel's documents: questions/<id>.json (asked by the agent) and answers/<id>.json. */
import * as z from "../support/zod.js";
import { PROTOCOLS } from "./versions.js";

/** What a tool call about to run shows: a text, or a file's change (old_text null for a new file). */
export const ToolPreviewContentSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("text"), text: z.string() }),
  z.object({
    type: z.literal("diff"),
    path: z.string().min(1),
    old_text: z.string().nullable(),
    new_text: z.string(),
  }),
]);

/**
 * The tool call a permission question is about, as the agent described it: a front end shows it (an
 * editor as the tool call itself, its diff included) instead of the question's bare text.
 */
export const ToolPreviewSchema = z
  .object({
    id: z.string().min(1).describe("The agent's id of the tool call (a tool_use event's id)."),
    title: z.string(),
    kind: z.string().describe("read, edit, delete, move, search, execute, think, fetch, other…"),
    locations: z.array(z.object({ path: z.string().min(1), line: z.number().int().optional() })).optional(),
    content: z.array(ToolPreviewContentSchema).optional(),
  })
  .describe("The tool call a permission question is about.");
export type ToolPreview = z.infer<typeof ToolPreviewSchema>;

/** questions/<id>.json — a question asked through the return channel. */
export const QuestionSchema = z
  .object({
    protocol: z.literal(PROTOCOLS.question),
    id: z.string().min(1),
    task_id: z.string().min(1),
    question: z.string().min(1),
    options: z.array(z.string()).optional(),
    tool: ToolPreviewSchema.optional().describe("Set when the question asks permission for a tool call."),
    asked_at: z.iso.datetime({ offset: true }),
  })
  .describe("caesar.question/v1: a question an agent asked through ask_orchestrator.");
export type Question = z.infer<typeof QuestionSchema>;

/** answers/<id>.json — the orchestrator's answer to the question of the same id. */
export const AnswerSchema = z
  .object({
    protocol: z.literal(PROTOCOLS.answer),
    id: z.string().min(1).describe("The id of the question answered."),
    task_id: z.string().min(1),
    answer: z.string(),
    answered_at: z.iso.datetime({ offset: true }),
    answered_by: z.string().optional(),
  })
  .describe("caesar.answer/v1: the answer to questions/<id>.json.");
export type Answer = z.infer<typeof AnswerSchema>;
