import { existsSync } from "node:fs";
import { CaesarError, messageOf } from "../../support/errors.js";
import { recordSpan } from "../../support/telemetry/spans.js";
import { pushKeepRef } from "../../workspace/result-ref.js";
import { hasSeparateResult } from "../store/state.js";
import type { TaskPlan } from "../store/task-plan.js";
import type { TaskRecord } from "../store/task-store.js";
import { readState, updateState } from "../store/task-store.js";
import { type Caller, governed, identifyCaller } from "./caller.js";
import { readPlan } from "./live-task.js";
import { applyResult, taskResult } from "./result.js";
import { assertWithinSubtree } from "./subtree.js";

/** `caesar.apply`, under the task's span: the change brought into the work tree, or why it was not. */
function traceApply(
  plan: TaskPlan | undefined,
  id: string,
  by: string,
  start: number,
  outcome: { files?: number; head?: string; error?: unknown },
): void {
  if (!plan?.telemetry || !plan.trace) return;
  recordSpan(plan.telemetry, {
    name: "caesar.apply",
    traceId: plan.trace.trace_id,
    parentSpanId: plan.trace.span_id,
    start,
    end: Date.now(),
    attributes: {
      "caesar.task.id": id,
      "caesar.apply.by": by,
      "caesar.apply.files": outcome.files,
      "caesar.apply.head": outcome.head,
    },
    ...(outcome.error !== undefined ? { error: messageOf(outcome.error) } : {}),
  });
}

export interface AppliedTask {
  id: string;
  files: string[];
  head: string;
  /** The git work tree the change was staged in. */
  top: string;
}

/**
 * Bring a finished worktree task's verified change into the work tree it branched from — the project's
 * for a task a person started, its parent's worktree for a sub-task — with a three-way merge, staged, and
 * record it. Refuses — changing nothing — while the task runs, for in-place tasks, for a task already
 * applied (unless `force`), whenever `applyResult` refuses, and, from inside a task, for a task outside
 * that task's subtree. Decides from caesar's records, never from what a front end passed in.
 */
export async function applyTask(
  record: TaskRecord,
  options: { by: string; force?: boolean; caller?: Caller },
): Promise<AppliedTask> {
  const state = await readState(record.dir);
  const action = `apply ${record.id}`;
  const caller = options.caller ?? (await identifyCaller(state.root, { action }));
  return governed(caller, action, async () => {
    await assertWithinSubtree(caller, record.id, "apply");
    if (state.phase !== "finished") {
      throw new CaesarError("task_running", `Task ${record.id} is still ${state.phase}.`, {
        detail: `Wait for it to finish (caesar logs ${record.id} --follow), or cancel it first.`,
      });
    }
    if (!hasSeparateResult(state)) {
      throw new CaesarError(
        "apply_inplace",
        `Task ${record.id} ran in place: its changes are already in your working tree.`,
        { detail: `See them with \`caesar diff ${record.id}\`.` },
      );
    }
    if (state.applied && options.force !== true) {
      throw new CaesarError(
        "already_applied",
        `Task ${record.id} was already applied (${state.applied.at}).`,
        {
          detail: "Pass --force to apply it again.",
        },
      );
    }
    const plan = await readPlan(record.dir);
    // Where the task branched from, and nowhere else: never the project's tree for a sub-task.
    const top = plan ? (plan.repo_top ?? state.root) : undefined;
    if (!top || !existsSync(top)) {
      throw new CaesarError(
        "apply_target_gone",
        `Task ${record.id} cannot be applied: ${top ? `the work tree it branched from (${top}) is gone` : "its plan cannot be read"}.`,
        {
          detail: top
            ? `A sub-task applies into its parent's worktree. Take its change from its branch ${state.branch ?? ""} by hand (git merge), or look at \`caesar diff ${record.id}\`. Nothing was changed.`
            : "Nothing was changed.",
        },
      );
    }
    const started = Date.now();
    const applied = await applyResult(state, top, await taskResult(state, top)).catch((error: unknown) => {
      traceApply(plan, record.id, options.by, started, { error });
      throw error;
    });
    traceApply(plan, record.id, options.by, started, { files: applied.files.length, head: applied.head });
    await updateState(record.dir, (current) => ({
      ...current,
      applied: { at: new Date().toISOString(), by: options.by, head: applied.head, files: applied.files },
    }));
    // A cluster task's result, once applied, is kept on the shared remote: no worker prunes it.
    if (state.remote && state.result_commit)
      await pushKeepRef(top, state.remote.git_remote, record.id, state.result_commit).catch(() => undefined);
    return { id: record.id, files: applied.files, head: applied.head, top };
  });
}
