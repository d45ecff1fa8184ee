import type { CaesarEvent } from "../../protocol/event.js";
import { TASK_FILES, taskPaths } from "../../protocol/task-dir.js";
import { trace } from "../../support/trace.js";
import { recoverTask } from "../lifecycle/recover.js";
import { ChangeWatch } from "../store/change-watch.js";
import { type RejectedLine, readEvents } from "../store/event-log.js";
import { markFinishedEvents } from "../store/event-owner.js";
import type { TaskState } from "../store/state.js";
import { readState } from "../store/task-store.js";

export interface FollowHandlers {
  onEvent?(event: CaesarEvent): void;
  onState?(state: TaskState): void;
  /** A line of events.jsonl that is not a valid event (an unknown protocol version, say). */
  onRejected?(line: RejectedLine): void;
}

/**
 * Follow a task's files until it finishes: every event as it is appended (an agent's own `finished` marked
 * `by: "agent"`, caesar's `by: "caesar"`), every state change. Reads only; the conductor owns the task.
 * Resolves with the final state (or the last one seen when aborted).
 */
export async function followTask(
  id: string,
  dir: string,
  handlers: FollowHandlers,
  signal?: AbortSignal,
): Promise<TaskState> {
  const paths = taskPaths(dir);
  let offset = 0;
  let line = 1;
  const readNew = async () => {
    const read = await readEvents(paths.events, offset, line);
    offset = read.offset;
    line += read.lines;
    for (const rejected of read.rejected) handlers.onRejected?.(rejected);
    return read.events;
  };
  let lastStateKey = "";
  let state: TaskState;
  const seen = { taskEnd: false };
  // Woken by its state and its events only: the agent's output and the logs change far more often.
  const watch = new ChangeWatch(dir, {
    pollMs: 500,
    only: [TASK_FILES.state, TASK_FILES.events],
  });
  try {
    for (;;) {
      // The state is read after the events: it then names caesar's `finished` if they hold it.
      const events = await readNew();
      state = await readState(dir);
      trace(`follow: ${events.length} event(s), ${state.phase}`);
      for (const event of markFinishedEvents(events, state, seen)) handlers.onEvent?.(event);
      const key = `${state.phase}:${state.updated_at}`;
      if (key !== lastStateKey) {
        lastStateKey = key;
        handlers.onState?.(state);
      }
      if (state.phase === "finished") {
        for (const event of markFinishedEvents(await readNew(), state, seen)) handlers.onEvent?.(event);
        return state;
      }
      if (signal?.aborted) return state;
      // A task whose conductor died is taken over by the project's service (started again if it is gone
      // too); a remote task's relay that died is started again.
      if ((await recoverTask({ id, dir, paths, state }, "run")).phase === "finished") continue;
      await watch.next(1000, signal);
    }
  } finally {
    watch.close();
  }
}
