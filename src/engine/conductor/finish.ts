import { open } from "node:fs/promises";
import { relative } from "node:path";
import type { StreamOutcome } from "../../agents/adapter.js";
import { settleBudget } from "../../policy/budget.js";
import type { Finding } from "../../protocol/report.js";
import { taskPaths } from "../../protocol/task-dir.js";
import { trace } from "../../support/trace.js";
import { changedFiles, isPristine, type ObservedChange } from "../../workspace/changes.js";
import { recordResultCommit } from "../../workspace/result-ref.js";
import { snapshotTree } from "../../workspace/snapshot.js";
import { controlPaths } from "../store/control.js";
import type { EventWriter } from "../store/event-log.js";
import type { Outcome, TaskState } from "../store/state.js";
import type { TaskPlan } from "../store/task-plan.js";
import { auditMirrors, readState, updateState } from "../store/task-store.js";
import { governanceFindings } from "./governance-findings.js";
import { reconcile } from "./reconcile.js";
import { recoverReport } from "./recover.js";

export interface FinishInput {
  dir: string;
  plan: TaskPlan;
  events: EventWriter;
  stream: StreamOutcome;
  outcome: Outcome;
  exit: { code: number | null; signal: string | null };
  /** Why the agent could not run or was concluded by someone else (shown as the report's summary). */
  launchError?: { code: string; message: string };
  findings?: Finding[];
  /** Concluding a task whose conductor died in its "finishing" phase (see `finished` below). */
  diedWhileFinishing?: boolean;
  /** Called after the `finished` event and before the final state (release the slot, close raw.log). */
  beforeFinalState?: () => Promise<void>;
}

const RAW_TAIL_BYTES = 512 * 1024;

/**
 * The end of every task, whoever ends it (its conductor, or a later command concluding an abandoned
 * task): observe the changes with git, recover the report, reconcile, write the final state atomically,
 * then the `finished` event.
 */
export async function finishTask(input: FinishInput): Promise<TaskState> {
  const { dir, plan } = input;
  const paths = taskPaths(dir);
  // Before anything rewrites them: did someone else rewrite caesar's records in the task directory?
  await auditMirrors(dir).catch(() => undefined);
  const before = await updateState(dir, (state) => ({ ...state, phase: "finishing" }));
  const end = await observeChanges(before, plan);
  const observed = end?.changes;
  trace("finish: changes observed");
  const recovered = await recoverReport({
    taskDir: dir,
    reportPath: paths.report,
    stream: input.stream,
    outputText: `${input.stream.finalText ?? ""}\n${await readTail(paths.raw, RAW_TAIL_BYTES)}`,
    outcome: input.outcome,
    exit: input.exit,
    timeoutMs: plan.timeout_ms,
    ...(input.launchError ? { launchError: input.launchError.message } : {}),
    changedFiles: observed?.length,
  });
  const report = reconcile({
    taskId: before.id,
    report: recovered.report,
    source: recovered.source,
    mode: plan.mode,
    workspace: before.workspace,
    observed,
    linked: before.linked,
    findings: [
      ...plan.findings,
      ...(input.findings ?? []),
      ...(input.stream.findings ?? []),
      ...recovered.findings,
      ...(await governanceFindings(plan.root, before.id).catch(() => [])),
    ],
    ...(input.stream.usage ? { usage: input.stream.usage } : {}),
  });
  // A task's events end with exactly one `finished`: a conductor that died after writing it, before its
  // final state, leaves its concluder nothing to append. (Only then: an agent can write events.jsonl too,
  // and what it writes never replaces the engine's own `finished`.)
  const alreadyFinished = input.diedWhileFinishing === true && (await input.events.endsWithFinished());
  if (input.launchError && !alreadyFinished)
    await input.events.append({
      type: "error",
      message: input.launchError.message,
      code: input.launchError.code,
    });
  // The `finished` event goes first: whoever sees the final state then finds it in events.jsonl.
  const current = await readState(dir);
  const outcome = current.cancel_requested && input.outcome !== "timed_out" ? "cancelled" : input.outcome;
  if (!alreadyFinished)
    await input.events.append({ type: "finished", status: report.status, summary: report.summary, outcome });
  await input.events.flush();
  // The budget: committed with the reported cost if the agent ran, released if it never did.
  await settleBudget(
    controlPaths(plan.root).budgets,
    plan.budget.tree ?? current.id,
    current.id,
    current.started_at !== null,
    report.usage.cost_usd ?? 0,
  ).catch(() => undefined);
  // Whatever the conductor still holds goes before the final state: a reader that sees "finished" may
  // remove the project at once (tests do), and nothing may still be writing into it.
  await input.beforeFinalState?.();
  const finished = await updateState(dir, (state) => ({
    ...state,
    phase: "finished",
    finished_at: new Date().toISOString(),
    outcome,
    exit: input.exit,
    report_status: report.status,
    report,
    error: input.launchError ?? state.error,
    waiting_for_slot: null,
    end_tree: end?.tree ?? null,
    result_commit: end?.commit ?? null,
  }));
  trace("finish: done");
  return finished;
}

interface EndOfTask {
  tree: string;
  commit: string | null;
  changes: ObservedChange[];
}

async function observeChanges(state: TaskState, plan: TaskPlan): Promise<EndOfTask | undefined> {
  const top = state.worktree ?? plan.repo_top;
  if (!top || !state.start_tree) return undefined;
  // A fresh worktree starts at its base: when git sees it untouched, the end tree is the start tree.
  if (state.worktree && state.base_ref && (await isPristine(top, state.base_ref)))
    return { tree: state.start_tree, commit: null, changes: [] };
  let tree: string;
  let changes: ObservedChange[];
  try {
    tree = await snapshotTree(top, state.materialised);
    changes = await changedFiles(top, state.start_tree, tree);
  } catch {
    // The worktree is gone (removed by hand?): nothing can be verified; the declaration stands.
    return undefined;
  }
  // Nothing changed: nothing to keep (diff and apply have nothing to show either).
  const commit =
    tree === state.start_tree
      ? null
      : await recordResultCommit(
          top,
          state.id,
          tree,
          state.base_ref,
          `caesar ${state.id}: ${state.objective.split("\n")[0]!.slice(0, 72)}`,
        ).catch(() => null);
  if (plan.repo_prefix)
    changes = changes.map((change) => ({ ...change, path: relative(plan.repo_prefix, change.path) }));
  return { tree, commit, changes };
}

async function readTail(path: string, bytes: number): Promise<string> {
  try {
    const handle = await open(path, "r");
    try {
      const { size } = await handle.stat();
      const length = Math.min(size, bytes);
      const buffer = Buffer.alloc(length);
      await handle.read(buffer, 0, length, size - length);
      return buffer.toString("utf8");
    } finally {
      await handle.close();
    }
  } catch {
    return "";
  }
}
