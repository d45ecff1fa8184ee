import type { Answer } from "../../protocol/questions.js";
import { answerQuestion } from "../questions/questions.js";
import { readState, type TaskRecord } from "../store/task-store.js";
import { type Caller, governed, identifyCaller } from "./caller.js";
import { assertWithinSubtree } from "./subtree.js";

/**
 * Answer a task's question (see `answerQuestion`) — from inside a task, only a question of a task in its
 * own subtree: an agent does not answer for another task's orchestrator.
 */
export async function answerTask(
  record: TaskRecord,
  questionId: string,
  text: string,
  by: string,
  options: { caller?: Caller } = {},
): Promise<Answer> {
  const action = `answer ${record.id} ${questionId}`;
  const caller = options.caller ?? (await identifyCaller((await readState(record.dir)).root, { action }));
  return governed(caller, action, async () => {
    await assertWithinSubtree(caller, record.id, "answer the questions of");
    return answerQuestion(record.dir, record.id, questionId, text, by);
  });
}
