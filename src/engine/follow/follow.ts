import type { CaesarEvent } from "../../protocol/event.js";
import { taskPaths } from "../../protocol/task-dir.js";
import { concludeIfAbandoned } from "../lifecycle/conclude.js";
import { ChangeWatch } from "../store/change-watch.js";
import { readEvents } from "../store/event-log.js";
import type { TaskState } from "../store/state.js";
import { readState } from "../store/task-store.js";

export interface FollowHandlers {
  onEvent?(event: CaesarEvent): void;
  onState?(state: TaskState): void;
}

/**
 * Follow a task's files until it finishes: every event as it is appended, every state change. Reads only;
 * the conductor owns the task. Resolves with the final state (or the last one seen when aborted).
 */
export async function followTask(
  id: string,
  dir: string,
  handlers: FollowHandlers,
  signal?: AbortSignal,
): Promise<TaskState> {
  const paths = taskPaths(dir);
  let offset = 0;
  let lastStateKey = "";
  let state = await readState(dir);
  const watch = new ChangeWatch(dir, { pollMs: 500 });
  try {
    for (;;) {
      const read = await readEvents(paths.events, offset);
      offset = read.offset;
      for (const event of read.events) handlers.onEvent?.(event);
      state = await readState(dir);
      const key = `${state.phase}:${state.updated_at}`;
      if (key !== lastStateKey) {
        lastStateKey = key;
        handlers.onState?.(state);
      }
      if (state.phase === "finished") {
        const rest = await readEvents(paths.events, offset);
        for (const event of rest.events) handlers.onEvent?.(event);
        return state;
      }
      if (signal?.aborted) return state;
      // A dead conductor concludes the task; a remote task's relay that died is started again.
      if (
        (state.conductor || state.remote) &&
        (await concludeIfAbandoned({ id, dir, paths, state }, "run")).phase === "finished"
      )
        continue;
      await watch.next(1000, signal);
    }
  } finally {
    watch.close();
  }
}
