import { cancelDescendants } from "../../engine/lifecycle/cancel.js";
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
            task.cancelled = true;
            task.abort.abort();
            cascadeCancel(context, id, localId);
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

/**
 * The sub-tasks a cancelled remote task started from this worker (recorded in this clone, most of them
 * remote tasks of their own) are cancelled with it, as a local task's are. In the background: a remote
 * child's cancel waits for its cluster to confirm, and the watch must go on.
 */
export function cascadeCancel(context: WorkerContext, id: string, localId: string): void {
  void cancelDescendants(context.root, localId, `cancel of ${id} from the cluster`)
    .then((cascaded) => {
      if (cascaded.length > 0)
        context.log(`[worker] ${id}: cancelled with it: ${cascaded.map((child) => child.id).join(", ")}`);
    })
    .catch((error: unknown) =>
      context.log(`[worker] ${id}: could not cancel its sub-tasks: ${(error as Error).message}`),
    );
}
