import { answerQuestion } from "../../engine/questions/questions.js";
import { isValidQuestionId } from "../../protocol/ids.js";
import { AnswerSchema } from "../../protocol/questions.js";
import { cancelKey } from "../names.js";
import { decode } from "../wire.js";
import type { WorkerContext } from "./context.js";
import type { HeldTask } from "./held-task.js";

/** Cancels and answers for this task, from the other side, as they come. */
export async function followControl(
  context: WorkerContext,
  id: string,
  localId: string,
  dir: string,
  task: HeldTask,
): Promise<() => void> {
  let stopped = false;
  let stopReconnect = () => {};
  let watch: Awaited<ReturnType<WorkerContext["control"]["watch"]>> | undefined;
  const loop = async () => {
    while (!stopped) {
      try {
        watch = await context.control.watch({ key: `${id}.>` });
        const current = watch;
        // After a server restart the watch starts again (it delivers what is there, then what comes).
        const offReconnect = context.cluster.onReconnect(() => current.stop());
        stopReconnect = offReconnect;
        for await (const entry of watch) {
          if (stopped) break;
          if (entry.operation !== "PUT") continue;
          if (entry.key === cancelKey(id)) {
            context.log(`[worker] ${id}: cancel received`);
            task.abort.abort();
            continue;
          }
          const questionId = entry.key.slice(`${id}.answer.`.length);
          const answer = decode(AnswerSchema, entry.value);
          if (!entry.key.startsWith(`${id}.answer.`) || !isValidQuestionId(questionId) || !answer) continue;
          await answerQuestion(
            dir,
            localId,
            questionId,
            answer.answer,
            answer.answered_by ?? "cluster",
          ).catch(() => undefined);
        }
      } catch {
        // the watch is re-established (a server restart)
      }
      stopReconnect();
      if (!stopped) await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  };
  void loop();
  return () => {
    stopped = true;
    watch?.stop();
  };
}
