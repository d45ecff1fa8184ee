import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { makeQuestionId } from "../../protocol/ids.js";
import { type Answer, AnswerSchema, type Question, type ToolPreview } from "../../protocol/questions.js";
import { taskPaths } from "../../protocol/task-dir.js";
import { PROTOCOLS } from "../../protocol/versions.js";
import { writeJsonAtomic } from "../../support/atomic-file.js";
import { ChangeWatch } from "../store/change-watch.js";
import { EventWriter } from "../store/event-log.js";
import { readTaskTextOrNothing } from "../store/task-files.js";

/**
 * The agent's side of a question (the return channel's `ask_orchestrator`): `questions/<id>.json`
 * written atomically, then a `question` event. The orchestrator's side is `answerQuestion`.
 */
export async function askQuestion(
  dir: string,
  taskId: string,
  text: string,
  options?: string[],
  tool?: ToolPreview,
): Promise<Question> {
  const paths = taskPaths(dir);
  const question: Question = {
    protocol: PROTOCOLS.question,
    id: makeQuestionId(),
    task_id: taskId,
    question: text,
    ...(options && options.length > 0 ? { options } : {}),
    ...(tool ? { tool } : {}),
    asked_at: new Date().toISOString(),
  };
  await mkdir(paths.questions, { recursive: true, mode: 0o700 });
  await writeJsonAtomic(join(paths.questions, `${question.id}.json`), question);
  await new EventWriter(paths.events, taskId).append({
    type: "question",
    question_id: question.id,
    question: text,
    ...(question.options ? { options: question.options } : {}),
    ...(tool ? { tool } : {}),
  });
  return question;
}

/** The answer to a question, if `answers/<id>.json` exists and is a valid answer to it. */
export async function readAnswer(dir: string, questionId: string): Promise<Answer | undefined> {
  const raw = await readTaskTextOrNothing(join(taskPaths(dir).answers, `${questionId}.json`));
  if (raw === undefined) return undefined;
  try {
    const parsed = AnswerSchema.safeParse(JSON.parse(raw));
    return parsed.success && parsed.data.id === questionId ? parsed.data : undefined;
  } catch {
    return undefined; // half-written by a non-atomic writer: the next change will show it whole
  }
}

/**
 * Wait for the answer to a question: a file watch on answers/ with a polling fallback, at most
 * `timeoutMs`. Resolves with the answer, or undefined when none came in time (or the wait was aborted).
 */
export async function waitForAnswer(
  dir: string,
  questionId: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Answer | undefined> {
  const answers = taskPaths(dir).answers;
  await mkdir(answers, { recursive: true, mode: 0o700 });
  const deadline = Date.now() + timeoutMs;
  const watch = new ChangeWatch(answers, { pollMs: 500 });
  try {
    for (;;) {
      const answer = await readAnswer(dir, questionId);
      if (answer) return answer;
      const remaining = deadline - Date.now();
      if (remaining <= 0 || signal?.aborted) return undefined;
      await watch.next(Math.min(remaining, 5_000), signal);
    }
  } finally {
    watch.close();
  }
}
