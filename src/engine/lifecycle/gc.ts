import { existsSync } from "node:fs";
import { messageOf } from "../../support/errors.js";
import { removeWorktree } from "../../workspace/worktree.js";
import { isVerifiedTask, loadAllTasks, updateState } from "../store/task-store.js";
import { type Caller, identifyCaller } from "./caller.js";
import { listIncompleteTasks, rollBackIncomplete } from "./incomplete.js";
import { recoverTask } from "./recover.js";
import { taskResult } from "./result.js";
import { descendantsOf } from "./subtree.js";

export interface GcEntry {
  id: string;
  action: "removed" | "would-remove" | "kept" | "finished";
  reason: string;
}

/**
 * Remove finished tasks' worktrees and branches — but never work that was not applied (uncommitted or
 * committed in the worktree) unless `force`; the result commit stays under refs/caesar/tasks/<id> even
 * then. Finishes tasks whose conductor died. From inside a task, only that task's subtree is collected.
 * Only what caesar's own records name is removed: a task directory without a record is kept.
 */
export async function collectGarbage(
  root: string,
  options: { dryRun: boolean; force: boolean; repoTop: string | null; caller?: Caller },
): Promise<GcEntry[]> {
  const caller = options.caller ?? (await identifyCaller(root, { action: "gc" }));
  let records = await loadAllTasks(root);
  if (caller.kind === "task") {
    const subtree = new Set((await descendantsOf(root, caller.id)).map((link) => link.id));
    records = records.filter((record) => subtree.has(record.id));
  }
  const entries: GcEntry[] = [];
  for (const record of records) {
    const wasRunning = record.state.phase !== "finished";
    const state = await recoverTask(record, "gc");
    // Said only of a task finished because its conductor was gone — not of one that ended by itself
    // while gc looked.
    if (wasRunning && state.phase === "finished" && state.error?.code === "conductor_died") {
      entries.push({ id: record.id, action: "finished", reason: state.error.message });
    }
    if (state.phase !== "finished" || !state.worktree || state.cleaned_at) continue;
    if (!isVerifiedTask(record.dir)) {
      entries.push({
        id: record.id,
        action: "kept",
        reason: `no record in caesar's control directory: its worktree ${state.worktree} and branch ${state.branch ?? "-"} are left for you to remove by hand`,
      });
      continue;
    }
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
  // Tasks never fully created (a front end killed while creating them): only a person takes them back.
  if (caller.kind === "person") {
    for (const task of await listIncompleteTasks(root)) {
      if (!task.abandoned) {
        entries.push({ id: task.id, action: "kept", reason: "being created: it has no state yet" });
        continue;
      }
      const reason =
        "never fully created (its front end died while creating it): its plan, record and budget place";
      if (options.dryRun) {
        entries.push({ id: task.id, action: "would-remove", reason });
        continue;
      }
      await rollBackIncomplete(root, task.id);
      entries.push({ id: task.id, action: "removed", reason: `${reason} taken back` });
    }
  }
  return entries;
}
