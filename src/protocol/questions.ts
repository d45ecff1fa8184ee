/** The return channel's documents: questions/<id>.json (asked by the agent) and answers/<id>.json. */
import * as z from "../support/zod.js";
import { PROTOCOLS } from "./versions.js";

/** questions/<id>.json — a question asked through the return channel. */
export const QuestionSchema = z
  .object({
    protocol: z.literal(PROTOCOLS.question),
    id: z.string().min(1),
    task_id: z.string().min(1),
    question: z.string().min(1),
    options: z.array(z.string()).optional(),
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
