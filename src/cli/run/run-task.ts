import { startPlannedTask } from "../../cluster/start.js";
import { followTask } from "../../engine/follow/follow.js";
import { wroteDuringReadOnly } from "../../engine/follow/task-view.js";
import { governed, identifyCaller } from "../../engine/lifecycle/caller.js";
import { describeRequest, resolvePlan, UNSANDBOXED_TITLE } from "../../engine/lifecycle/plan.js";
import type { DelegationRequest } from "../../engine/lifecycle/request.js";
import type { TaskState } from "../../engine/store/state.js";
import type { TaskPlan } from "../../engine/store/task-plan.js";
import type { TaskRecord } from "../../engine/store/task-store.js";
import { trace } from "../../support/trace.js";
import type { CommandContext } from "../command.js";

/** `caesar run`: start the task its flags asked for (parsed: see delegation-flags.ts), then follow it. */
export async function runFromCli(
  ctx: CommandContext,
  request: DelegationRequest,
  options: { detach: boolean },
): Promise<number> {
  const action = describeRequest(request);
  const caller = await identifyCaller(ctx.root, { cwd: ctx.cwd, action });
  const { plan, record } = await governed(caller, action, async () => {
    const resolved = await resolvePlan(request, { root: ctx.root, cwd: ctx.cwd, caller });
    trace("run: planned");
    return { plan: resolved.plan, record: await startPlannedTask(resolved.plan) };
  });
  trace("run: task started");
  warnIfUnsandboxed(record.id, plan);
  if (options.detach) {
    ctx.out.result({ task_id: record.id, dir: record.dir }, () =>
      [
        `${record.id} started (${plan.agent}, ${plan.mode}, ${plan.isolation}).`,
        `  follow: caesar logs ${record.id} --follow`,
        `  status: caesar status ${record.id}`,
        `  cancel: caesar cancel ${record.id}`,
      ].join("\n"),
    );
    return 0;
  }
  const final = await followAndRender(ctx, record);
  trace("run: followed");
  return exitCodeOf(final);
}

/**
 * Never silently: a task that runs without the OS sandbox it was meant to have (`[sandbox] mode = "auto"`
 * where none can run) says so on stderr, one line, at every `caesar run` and `caesar race` — never on stdout,
 * which `--json` keeps for its document.
 */
export function warnIfUnsandboxed(id: string, plan: Pick<TaskPlan, "findings">): void {
  const unsandboxed = plan.findings.find((finding) => finding.title === UNSANDBOXED_TITLE);
  if (unsandboxed)
    process.stderr.write(
      `caesar: warning: ${id} runs without an OS sandbox: ${(unsandboxed.detail ?? "").split(". ")[0]}.\n`,
    );
}

/**
 * `caesar run` succeeds only when the process succeeded and the report says success — and, for a
 * read-only task, when git saw no file changed: a write where none was allowed is a failure of the run,
 * whatever the agent reports.
 */
export function exitCodeOf(state: TaskState): number {
  return state.outcome === "succeeded" && state.report?.status === "success" && !wroteDuringReadOnly(state)
    ? 0
    : 1;
}

/**
 * Follow a task to its end, rendering it live for people (or silently, for --json). The first Ctrl-C
 * detaches: the task keeps running under the project's conductor service.
 */
export async function followAndRender(ctx: CommandContext, record: TaskRecord): Promise<TaskState> {
  const detach = new AbortController();
  const onInterrupt = () => detach.abort();
  process.once("SIGINT", onInterrupt);
  try {
    if (ctx.json) {
      const final = await followTask(record.id, record.dir, {}, detach.signal);
      ctx.out.result({ task_id: record.id, state: final, report: final.report });
      return final;
    }
    // Loaded only to render: measuring text for a terminal costs a few MiB (ICU's segmenter) that --json
    // never needs.
    const { createRunRenderer } = await import("../../ui/run-renderer.js");
    const renderer = createRunRenderer({ out: process.stdout, taskId: record.id });
    renderer.header(record.state);
    let waitingShown = "";
    const final = await followTask(
      record.id,
      record.dir,
      {
        onEvent: (event) => renderer.event(event),
        onState: (state) => {
          if (state.remote) renderer.remote(state.remote);
          const key = state.waiting_for_slot?.map((h) => h.task_id).join(",") ?? "";
          if (state.waiting_for_slot && key !== waitingShown) {
            waitingShown = key;
            renderer.waiting(state.waiting_for_slot);
          }
        },
      },
      detach.signal,
    );
    if (final.phase !== "finished") {
      process.stderr.write(
        `\nDetached from ${record.id}; it keeps running.\n  follow: caesar logs ${record.id} --follow\n  cancel: caesar cancel ${record.id}\n`,
      );
      return final;
    }
    renderer.finished(final);
    return final;
  } finally {
    process.off("SIGINT", onInterrupt);
  }
}
