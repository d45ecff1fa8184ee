import { existsSync } from "node:fs";
import { messageOf } from "../../support/errors.js";
import { removeWorktree } from "../../workspace/worktree.js";
import { loadAllTasks, updateState } from "../store/task-store.js";
import { concludeIfAbandoned } from "./conclude.js";
import { taskResult } from "./result.js";

export interface GcEntry {
  id: string;
  action: "removed" | "would-remove" | "kept" | "concluded";
  reason: string;
}

/**
 * Remove finished tasks' worktrees and branches — but never work that was not applied (uncommitted or
 * committed in the worktree) unless `force`; the result commit stays under refs/caesar/tasks/<id> even
 * then. Concludes tasks whose conductor died.
 */
export async function collectGarbage(
  root: string,
  options: { dryRun: boolean; force: boolean; repoTop: string | null },
): Promise<GcEntry[]> {
  const entries: GcEntry[] = [];
  for (const record of await loadAllTasks(root)) {
    const wasRunning = record.state.phase !== "finished";
    const state = await concludeIfAbandoned(record, "gc");
    if (wasRunning && state.phase === "finished") {
      entries.push({
        id: record.id,
        action: "concluded",
        reason: state.error?.message ?? "its conductor is gone",
      });
    }
    if (state.phase !== "finished" || !state.worktree || state.cleaned_at) continue;
    const top = options.repoTop ?? state.root;
    // A task whose agent never started has nothing of anyone's in its worktree (at most a setup's output).
    if (existsSync(state.worktree) && !options.force && state.started_at !== null) {
      let unapplied: number;
      try {
        const result = await taskResult(state, top);
        unapplied = state.applied ? 0 : result.changes.length;
      } catch (error) {
        entries.push({
          id: record.id,
          action: "kept",
          reason: `its change could not be checked: ${messageOf(error)}`,
        });
        continue;
      }
      if (unapplied > 0) {
        entries.push({
          id: record.id,
          action: "kept",
          reason: `${unapplied} changed file(s) not applied — \`caesar apply ${record.id}\`, or gc --force`,
        });
        continue;
      }
    }
    if (options.dryRun) {
      entries.push({
        id: record.id,
        action: "would-remove",
        reason: `worktree ${state.worktree}, branch ${state.branch ?? "-"}`,
      });
      continue;
    }
    await removeWorktree(top, state.worktree, state.branch);
    await updateState(record.dir, (current) => ({ ...current, cleaned_at: new Date().toISOString() }));
    entries.push({ id: record.id, action: "removed", reason: `worktree and branch ${state.branch ?? "-"}` });
  }
  return entries;
}
