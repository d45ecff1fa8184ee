import { relative } from "node:path";
import type { StreamOutcome } from "../../agents/adapter.js";
import { settleBudget } from "../../policy/budget.js";
import type { Attempt, CheckResult } from "../../protocol/checks.js";
import type { Finding } from "../../protocol/report.js";
import { taskPaths } from "../../protocol/task-dir.js";
import { trace } from "../../support/trace.js";
import { changedFiles, isPristine, type ObservedChange } from "../../workspace/changes.js";
import { recordResultCommit } from "../../workspace/result-ref.js";
import { snapshotTree } from "../../workspace/snapshot.js";
import { controlPaths } from "../store/control.js";
import type { EventWriter } from "../store/event-log.js";
import type { TaskState } from "../store/state.js";
import { readTaskTail } from "../store/task-files.js";
import type { TaskPlan } from "../store/task-plan.js";
import { auditMirrors, readState, updateState } from "../store/task-store.js";
import { applyChecks } from "./check-verdict.js";
import { checksNotRun } from "./checks.js";
import type { Ending } from "./ending.js";
import { governanceFindings } from "./governance-findings.js";
import { reconcile } from "./reconcile.js";
import { recoverReport } from "./recover.js";
import { adoptSandboxCommits } from "./sandbox-commits.js";
import { pointerFindings } from "./worktree-pointer.js";

export interface FinishInput {
  dir: string;
  plan: TaskPlan;
  events: EventWriter;
  stream: StreamOutcome;
  /** How the task ended, in words (ending.ts): the error event, state.error and a synthesised report. */
  ending: Ending;
  findings?: Finding[];
  /** Called after the `finished` event and before the final state (release the slot, close raw.log). */
  beforeFinalState?: () => Promise<void>;
  /** The checks after the last attempt (absent: the plan's checks did not run). */
  checks?: CheckResult[];
  /** Every run of the agent, with the checks after it. */
  attempts?: Attempt[];
  /** Where the last attempt's output begins in raw.log (the degraded tier reads only that). */
  rawFrom?: number;
}

const RAW_TAIL_BYTES = 512 * 1024;

/**
 * The end of every task, whoever ends it (its conductor, or a later command finishing an abandoned
 * task): observe the changes with git, recover the report, reconcile, write the final state atomically,
 * then the `finished` event.
 */
export async function finishTask(input: FinishInput): Promise<TaskState> {
  const { dir, plan } = input;
  const paths = taskPaths(dir);
  // Before anything rewrites them: did someone else rewrite caesar's records in the task directory?
  await auditMirrors(dir).catch(() => undefined);
  const before = await updateState(dir, (state) => ({ ...state, phase: "finishing" }));
  const end = await observeChanges(before, plan, dir);
  const observed = end?.changes;
  trace("finish: changes observed");
  const recovered = await recoverReport({
    taskDir: dir,
    reportPath: paths.report,
    stream: input.stream,
    outputText: input.stream.stdoutIsProtocol
      ? (input.stream.finalText ?? "")
      : `${input.stream.finalText ?? ""}\n${await readTaskTail(paths.raw, RAW_TAIL_BYTES, input.rawFrom)}`,
    ending: input.ending,
    changedFiles: observed?.length,
  });
  const reconciled = reconcile({
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
      ...(end?.findings ?? []),
      ...(await governanceFindings(plan.root, before.id).catch(() => [])),
    ],
    ...(input.stream.usage ? { usage: input.stream.usage } : {}),
  });
  const checks =
    input.checks ??
    (plan.checks.length > 0 ? checksNotRun(plan.checks, whyChecksDidNotRun(input.ending)) : []);
  const report = applyChecks(reconciled, checks, input.attempts ?? []);
  // A task's events end with exactly one `finished` of caesar's, and one `error` per failure (none when
  // the agent's stream already wrote it). Both carry one `at`, recorded with the seq of the first before
  // they are appended: a conductor that died in between leaves the next one only what is missing — and an
  // agent's own `finished` line is never taken for caesar's.
  const { ending } = input;
  const current = await readState(dir);
  const outcome = current.cancel_requested && ending.outcome !== "timed_out" ? "cancelled" : ending.outcome;
  const recorded = current.final_events;
  const written = recorded ? await input.events.typesWrittenAt(recorded.seq, recorded.at) : new Set<string>();
  const at = recorded?.at ?? new Date().toISOString();
  if (!recorded) {
    const seq = await input.events.nextSequence();
    await updateState(dir, (state) => ({ ...state, final_events: { seq, at } }));
  }
  // Once caesar's `finished` is written, the task's story is told: nothing more is appended after it.
  if (ending.error && !ending.announced && !written.has("error") && !written.has("finished"))
    await input.events.append({ type: "error", message: ending.error.message, code: ending.error.code }, at);
  // The `finished` event goes first: whoever sees the final state then finds it in events.jsonl.
  if (!written.has("finished"))
    await input.events.append(
      { type: "finished", status: report.status, summary: report.summary, outcome, by: "caesar" },
      at,
    );
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
    exit: ending.exit,
    report_status: report.status,
    report,
    error: ending.error ?? state.error,
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
  /** What caesar found wrong with the worktree itself (its `.git` pointer). */
  findings: Finding[];
}

async function observeChanges(state: TaskState, plan: TaskPlan, dir: string): Promise<EndOfTask | undefined> {
  // A remote task's workspace is on its worker: nothing here shows what it changed.
  if (state.remote) return undefined;
  const top = state.worktree ?? plan.repo_top;
  if (!top || !state.start_tree) return undefined;
  const findings = state.worktree ? await pointerFindings(state.worktree, dir) : [];
  // What a sandboxed agent committed is in the project's store before the snapshot (sandbox-commits.ts).
  findings.push(...(await adoptSandboxCommits(plan, state)));
  trace("finish: commits adopted");
  // A fresh worktree starts at its base: when git sees it untouched, the end tree is the start tree.
  if (state.worktree && state.base_ref && (await isPristine(top, state.base_ref)))
    return { tree: state.start_tree, commit: null, changes: [], findings };
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
    changes = changes.map((change) => ({
      ...change,
      path: relative(plan.repo_prefix, change.path),
      ...(change.from ? { from: relative(plan.repo_prefix, change.from) } : {}),
    }));
  return { tree, commit, changes, findings };
}

function whyChecksDidNotRun(ending: Ending): string {
  if (ending.outcome === "cancelled") return "not run: the task was cancelled";
  if (ending.outcome === "timed_out") return "not run: the task's deadline had passed";
  if (ending.error?.code === "conductor_died")
    return "not finished: the task's conductor died before its checks ended";
  return ending.agentRan ? "not run" : "not run: the agent could not run";
}
