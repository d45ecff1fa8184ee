import { existsSync } from "node:fs";
import { loadPlan } from "../../engine/store/task-plan.js";
import { loadAllTasks } from "../../engine/store/task-store.js";
import { removeWorktree } from "../../workspace/worktree.js";
import { isHeldBy, readClaim } from "../claims.js";
import type { WorkerContext } from "./context.js";

/**
 * Remove the worktrees and branches of cluster attempts this worker's clone holds but no longer owns:
 * attempts fenced (another worker took the task over), abandoned or lost (a previous worker process in
 * this clone was killed), or ended without their worktree removed. An attempt is kept while this
 * worker process holds it (`held`) or its claim still names this very process as running it. Each
 * attempt's record (its task directory) stays: only the checkout and its branch go — what the attempt
 * did is on the submitter, and a result is kept under `refs/caesar/tasks/<id>`.
 */
export async function sweepForeignAttempts(
  context: WorkerContext,
  held: ReadonlySet<string>,
): Promise<number> {
  let swept = 0;
  for (const record of await loadAllTasks(context.root)) {
    const { state } = record;
    // A submitter's mirror (state.remote) is not an attempt; a local task is not the cluster's.
    if (state.remote || state.phase !== "finished" || !state.worktree || !existsSync(state.worktree))
      continue;
    const plan = await loadPlan(record.dir).catch(() => undefined);
    if (!plan?.remote) continue;
    const id = record.id.replace(/\.run$/, "");
    if (held.has(id)) continue;
    const claim = (await readClaim(context.claims, id).catch(() => undefined))?.claim;
    const { me } = context;
    if (isHeldBy(claim, me)) continue;
    await removeWorktree(context.top, state.worktree, state.branch).catch(() => undefined);
    context.log(
      `[worker] removed the worktree of ${id} (attempt no longer this worker's): ${state.worktree}`,
    );
    swept += 1;
  }
  return swept;
}
