import { taskPaths } from "../../protocol/task-dir.js";
import { type CaesarError, isCaesarError, messageOf } from "../../support/errors.js";
import { EventWriter } from "../store/event-log.js";
import { appendRefusal } from "../store/refusals.js";
import { isVerifiedTask, readState, recordedTaskDirOf } from "../store/task-store.js";

/**
 * Keep on record what caesar refused a task's agent: a line beside the task's own records (read back as a
 * finding when it ends) and, while it runs, an `error` event in its events.jsonl — so `caesar logs` and
 * the report both say what the agent tried. Only for a task caesar itself made (a verified record).
 */
export async function recordRefusal(
  root: string,
  taskId: string,
  action: string,
  error: CaesarError | Error,
): Promise<void> {
  const dir = recordedTaskDirOf(root, taskId);
  if (!isVerifiedTask(dir)) return;
  const code = isCaesarError(error) ? error.code : "refused";
  const summary = messageOf(error);
  try {
    await appendRefusal(root, taskId, { code, action, summary });
    const state = await readState(dir);
    if (state.phase !== "finished") {
      await new EventWriter(taskPaths(dir).events, taskId).append({
        type: "error",
        code,
        message: `caesar refused \`${action}\`: ${summary}`,
      });
    }
  } catch {
    // Recording must never turn a refusal into another failure: the refusal itself stands.
  }
}
