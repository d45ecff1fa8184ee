import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { plannedWorktree } from "../../engine/conductor/isolate.js";
import { terminateGroup } from "../../engine/conductor/terminate.js";
import { readTaskTextSync } from "../../engine/store/task-files.js";
import type { TaskPlan } from "../../engine/store/task-plan.js";
import { readState, taskDirOf } from "../../engine/store/task-store.js";
import { isProcessAlive } from "../../support/process.js";
import { removeWorktree } from "../../workspace/worktree.js";
import type { WorkerContext } from "./context.js";

/**
 * The task's id in this clone's store: its own, unless this very clone sent it (an agent running here
 * delegated it, and this worker took it back): that id names the relay's mirror of it here, and the
 * run gets `<id>.run` beside it.
 */
export function localIdFor(context: WorkerContext, id: string): string {
  const mirror = join(taskDirOf(context.root, id), "state.json");
  try {
    return (JSON.parse(readTaskTextSync(mirror) ?? "{}") as { remote?: unknown }).remote ? `${id}.run` : id;
  } catch {
    return id;
  }
}

/**
 * A task this worker ran before (its earlier attempt, before a restart): its agent stopped, its worktree
 * and directory removed — what it did is in the log already, and the new attempt starts clean.
 */
export async function clearEarlierAttempt(context: WorkerContext, plan: TaskPlan, id: string): Promise<void> {
  const dir = taskDirOf(context.root, id);
  const state = existsSync(dir) ? await readState(dir).catch(() => undefined) : undefined;
  if (
    state?.conductor &&
    state.phase !== "finished" &&
    state.conductor.pid !== process.pid &&
    isProcessAlive(state.conductor)
  ) {
    throw new Error(`process ${state.conductor.pid} still conducts ${id} in this clone`);
  }
  if (state?.agent_process && isProcessAlive(state.agent_process))
    await terminateGroup(state.agent_process.pid);
  const planned = plannedWorktree(plan, id);
  const worktree = state?.worktree ?? planned?.path;
  // Only when there is something: three git commands per task add up on a busy worker.
  if (worktree && (existsSync(worktree) || state))
    await removeWorktree(context.top, worktree, state?.branch ?? planned?.branch ?? null);
  await rm(dir, { recursive: true, force: true });
}
