import { awaitFinished } from "../engine/follow/await-tasks.js";
import {
  type DelegationOutcome,
  type DelegationTarget,
  describeOutcome,
  renderParallel,
} from "../engine/follow/delegation-output.js";
import type { TaskView } from "../engine/follow/task-view.js";
import { readPlan } from "../engine/store/task-plan.js";
import { taskDirOf } from "../engine/store/task-store.js";
import type { OrchestratorContext } from "./context.js";
import { keepAlive, type ToolExtra } from "./progress.js";

/** The delegation reference's error for an id without a result. */
const noResult = (id: string): DelegationOutcome => ({
  task_id: id,
  target: id,
  success: false,
  output: null,
  error: `No result found for task_id '${id}'`,
});

export interface WaitedTask {
  outcome: DelegationOutcome;
  view: TaskView | null;
}

/**
 * Wait, with no cap, until the tasks just started have finished (each one's own deadline bounds it), or
 * the caller is gone; then each one's result as the reference's synchronous delegate gives it. While it
 * waits, progress notifications name the tasks, so a client that gives up still knows their ids.
 */
export async function awaitDelegated(
  context: OrchestratorContext,
  extra: ToolExtra,
  started: { id: string; plan: DelegationTarget }[],
): Promise<WaitedTask[]> {
  const ids = started.map((task) => task.id);
  const stop = keepAlive(extra, `waiting for ${ids.join(", ")} (caesar_await them if this call ends)`);
  try {
    const result = await awaitFinished(context.root, ids, {
      signal: AbortSignal.any([context.session, extra.signal]),
      by: "mcp",
    });
    return started.map(({ id, plan }) => {
      const view = result.results.find((found) => found.task_id === id);
      return view ? { outcome: describeOutcome(view, plan), view } : { outcome: noResult(id), view: null };
    });
  } finally {
    stop();
  }
}

/**
 * caesar_await's per-task blocks (as the reference's parallel fan-out): for every task once none is
 * pending, each with the plan it was started with (its model, its deadline).
 */
export async function blocksOf(root: string, ids: string[], views: TaskView[]): Promise<string> {
  const outcomes = await Promise.all(
    ids.map(async (id) => {
      const view = views.find((found) => found.task_id === id);
      if (!view) return noResult(id);
      return describeOutcome(view, await readPlan(taskDirOf(root, id)));
    }),
  );
  return renderParallel(outcomes);
}
