import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { askQuestion, waitForAnswer } from "../engine/questions/ask.js";
import { readState } from "../engine/store/task-store.js";
import type { Task } from "../protocol/task.js";
import { formatDuration } from "../support/duration.js";
import * as z from "../support/zod.js";
import { keepAlive } from "./progress.js";
import { runTool, toolResult } from "./tool-result.js";

/** How long `ask_orchestrator` waits by default (OACP: 5 minutes), never beyond the task's deadline. */
export const DEFAULT_ANSWER_WAIT_MS = 5 * 60_000;

/**
 * An unanswered question comes back this long before the deadline at the latest — a quarter of the
 * task's deadline_ms, at most a minute — so that "proceed on your best judgement" reaches an agent that
 * still has time to act on it (and to write its report) before it is stopped.
 */
export const ANSWER_MARGIN_RATIO = 0.25;
export const ANSWER_MARGIN_MAX_MS = 60_000;

export function answerMarginMs(deadlineMs: number | null): number {
  if (deadlineMs === null) return 0;
  return Math.min(ANSWER_MARGIN_MAX_MS, Math.round(deadlineMs * ANSWER_MARGIN_RATIO));
}

export interface AskOptions {
  dir: string;
  task: Task;
  /** The longest wait for an answer (default 5 minutes). */
  maxWaitMs: number;
  /** Aborted when the MCP session ends. */
  session: AbortSignal;
}

export interface AnswerWindow {
  waitMs: number;
  limitedBy: "default" | "deadline";
  deadlineAt: string | null;
  /** How long before the deadline an unanswered question comes back (answerMarginMs). */
  marginMs: number;
}

/**
 * How long a question may wait now: the default, capped by the time left before the task's deadline
 * (state.json's deadline_at, set when the agent started; else task.json's created_at + deadline_ms)
 * minus the margin the agent keeps to act on the absence of an answer.
 */
export async function answerWindow(
  dir: string,
  task: Task,
  maxWaitMs: number,
  now = Date.now(),
): Promise<AnswerWindow> {
  const state = await readState(dir).catch(() => undefined);
  let deadline: number | undefined;
  if (state?.deadline_at) deadline = Date.parse(state.deadline_at);
  else if (task.deadline_ms !== null) deadline = Date.parse(task.created_at) + task.deadline_ms;
  const deadlineAt = deadline === undefined ? null : new Date(deadline).toISOString();
  const marginMs = deadline === undefined ? 0 : answerMarginMs(task.deadline_ms);
  const usable = deadline === undefined ? Number.POSITIVE_INFINITY : deadline - marginMs - now;
  if (usable >= maxWaitMs) return { waitMs: maxWaitMs, limitedBy: "default", deadlineAt, marginMs };
  return { waitMs: Math.max(0, usable), limitedBy: "deadline", deadlineAt, marginMs };
}

export function registerAskOrchestrator(server: McpServer, options: AskOptions): void {
  server.registerTool(
    "ask_orchestrator",
    {
      title: "Ask the orchestrator",
      description: [
        "Ask the orchestrator that delegated this task a question, and wait for its answer.",
        "Use it when a decision is outside your task's scope or the task is ambiguous in a way that changes the result (which of two designs, may a public API change, is a failing test expected). Do not use it for things you can find out yourself.",
        `It waits at most ${formatDuration(options.maxWaitMs)}, and comes back well before the task's deadline (with a quarter of the task's time, at most a minute, still yours). Returns {answered: true, answer} — or {answered: false} when no answer came in time: that is not an error; proceed on your best judgement and say in your report which assumption you made.`,
        "`options`: the answers you would accept, when it is a choice.",
      ].join(" "),
      inputSchema: {
        question: z
          .string()
          .trim()
          .min(1)
          .max(8_000)
          .describe("The question, self-contained: the orchestrator sees nothing else."),
        options: z
          .array(z.string().min(1))
          .max(20)
          .optional()
          .describe("Possible answers, when it is a choice."),
      },
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        idempotentHint: false,
        openWorldHint: false,
      },
    },
    async (args, extra) =>
      runTool(async () => {
        const { dir, task } = options;
        const window = await answerWindow(dir, task, options.maxWaitMs);
        const question = await askQuestion(dir, task.id, args.question, args.options);
        const stop = AbortSignal.any([options.session, extra.signal]);
        const started = Date.now();
        // Clients that reset their request timeout on progress keep waiting as long as we do.
        const stopProgress = keepAlive(
          extra,
          `waiting for the orchestrator's answer to ${question.id}`,
          window.waitMs,
        );
        try {
          const answer = await waitForAnswer(dir, question.id, window.waitMs, stop);
          if (answer) {
            return toolResult(
              {
                answered: true,
                question_id: question.id,
                answer: answer.answer,
                answered_by: answer.answered_by ?? null,
                answered_at: answer.answered_at,
              },
              `The orchestrator answered: ${answer.answer}`,
            );
          }
          const waited = Date.now() - started;
          const left =
            window.deadlineAt === null ? null : Math.max(0, Date.parse(window.deadlineAt) - Date.now());
          const why =
            window.limitedBy === "deadline"
              ? `the task's deadline (${window.deadlineAt}) is ${formatDuration(left ?? 0)} away: that time is left for you to finish`
              : `the wait is limited to ${formatDuration(window.waitMs)}`;
          return toolResult(
            {
              answered: false,
              question_id: question.id,
              waited_ms: waited,
              wait_limit_ms: window.waitMs,
              limited_by: window.limitedBy,
              deadline_in_ms: left,
              guidance:
                "No answer in time. Proceed on your best judgement rather than waiting: choose the most reasonable option, and state the assumption in your report (add the question to its `questions` if the decision still matters).",
            },
            `No answer to ${question.id} (${why}). This is not an error: proceed on your best judgement and state your assumption in the report.`,
          );
        } finally {
          stopProgress();
        }
      }),
  );
}
