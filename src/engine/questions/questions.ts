import { link, mkdir, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { safeParseDocument } from "../../protocol/documents.js";
import { assertTaskId, isValidQuestionId } from "../../protocol/ids.js";
import { type Answer, type Question, QuestionSchema } from "../../protocol/questions.js";
import { taskPaths } from "../../protocol/task-dir.js";
import { PROTOCOLS } from "../../protocol/versions.js";
import { CaesarError, errnoOf, UsageError } from "../../support/errors.js";
import { randomHex } from "../../support/random.js";
import { EventWriter } from "../store/event-log.js";
import { appendTaskText, readTaskText } from "../store/task-files.js";
import { readState } from "../store/task-store.js";

export interface QuestionWithAnswer {
  question: Question;
  answer: Answer | null;
}

/** A question's or answer's JSON, read as every task file is (a FIFO or a link there is refused, moved aside). */
async function readJson(path: string): Promise<unknown> {
  const text = await readTaskText(path);
  if (text === undefined) throw Object.assign(new Error(`${path} does not exist`), { code: "ENOENT" });
  return JSON.parse(text);
}

/** Every question asked through the task's return channel, with its answer when there is one. */
export async function listQuestions(dir: string): Promise<QuestionWithAnswer[]> {
  const paths = taskPaths(dir);
  let names: string[];
  try {
    names = await readdir(paths.questions);
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return [];
    throw error;
  }
  const out: QuestionWithAnswer[] = [];
  for (const name of names.filter((n) => n.endsWith(".json")).sort()) {
    const id = name.slice(0, -".json".length);
    if (!isValidQuestionId(id)) continue;
    const question = safeParseDocument(
      "question",
      await readJson(join(paths.questions, name)).catch(() => undefined),
    );
    if (!question.ok) continue;
    const answerRaw = await readJson(join(paths.answers, name)).catch(() => undefined);
    const answer = answerRaw === undefined ? undefined : safeParseDocument("answer", answerRaw);
    out.push({ question: question.value, answer: answer?.ok ? answer.value : null });
  }
  return out.sort((a, b) => a.question.asked_at.localeCompare(b.question.asked_at));
}

async function isRemoteTask(dir: string): Promise<boolean> {
  try {
    return (await readState(dir)).remote !== null;
  } catch {
    return false;
  }
}

export async function pendingQuestions(dir: string): Promise<Question[]> {
  return (await listQuestions(dir)).filter((q) => q.answer === null).map((q) => q.question);
}

/**
 * Answer a question: writes `answers/<id>.json` atomically and only if it does not exist yet (a second
 * answer fails, explicitly, and writes nothing), then an `answer` event. An unknown question fails too.
 */
export async function answerQuestion(
  dir: string,
  taskId: string,
  questionId: string,
  text: string,
  by: string,
): Promise<Answer> {
  assertTaskId(taskId);
  if (!isValidQuestionId(questionId)) {
    throw new UsageError("invalid_question_id", `Invalid question id ${JSON.stringify(questionId)}.`, {
      detail: `List the task's questions with \`caesar status ${taskId}\`.`,
    });
  }
  const paths = taskPaths(dir);
  let question: Question;
  try {
    question = QuestionSchema.parse(await readJson(join(paths.questions, `${questionId}.json`)));
  } catch (error) {
    throw new CaesarError("unknown_question", `Task ${taskId} has no question ${questionId}.`, {
      detail: `${errnoOf(error) === "ENOENT" ? "" : `${(error as Error).message}. `}List its questions with \`caesar status ${taskId}\`.`,
    });
  }
  const answer: Answer = {
    protocol: PROTOCOLS.answer,
    id: question.id,
    task_id: taskId,
    answer: text,
    answered_at: new Date().toISOString(),
    answered_by: by,
  };
  await mkdir(paths.answers, { recursive: true, mode: 0o700 });
  const target = join(paths.answers, `${questionId}.json`);
  const temp = join(paths.answers, `.${questionId}.${process.pid}.${randomHex(4)}.tmp`);
  // Through the one opener of task files: answers/ must be a folder of the task, not a link out of it.
  await appendTaskText(temp, `${JSON.stringify(answer, null, 2)}\n`);
  try {
    // link() fails if the target exists: the first answer wins, atomically, and appears whole.
    await link(temp, target);
  } catch (error) {
    if (errnoOf(error) === "EEXIST") {
      const existing = (await readJson(target).catch(() => ({}))) as Partial<Answer>;
      throw new CaesarError("already_answered", `Question ${questionId} of ${taskId} is already answered.`, {
        detail: `Answered ${existing.answered_at ?? ""}${existing.answered_by ? ` by ${existing.answered_by}` : ""}: ${JSON.stringify(existing.answer ?? "")}. Nothing was written.`,
      });
    }
    throw error;
  } finally {
    await rm(temp, { force: true });
  }
  // A remote task's events are its worker's, mirrored here: the worker writes the `answer` event when
  // the answer reaches it (the relay carries this file there).
  if (!(await isRemoteTask(dir)))
    await new EventWriter(paths.events, taskId).append({
      type: "answer",
      question_id: questionId,
      answer: text,
      by,
    });
  return answer;
}
