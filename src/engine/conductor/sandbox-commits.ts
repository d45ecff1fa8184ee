import type { Finding } from "../../protocol/report.js";
import { messageOf } from "../../support/errors.js";
import { adoptTaskCommits, prepareTaskCommits } from "../../workspace/task-objects.js";
import type { TaskState } from "../store/state.js";
import type { TaskPlan } from "../store/task-plan.js";

/** Does this task's agent commit through a folder of its own (a worktree task in caesar's OS sandbox)? */
function commitsThroughTaskObjects(plan: TaskPlan, state: Pick<TaskState, "worktree" | "remote">): boolean {
  return plan.sandbox.backend !== null && state.worktree !== null && !state.remote;
}

/**
 * Before a sandboxed run in a worktree: the agent's git is pointed at an object folder of its own, its
 * HEAD detached (workspace/task-objects.ts). The variables are a convenience: without them a commit
 * only fails, the project's store being read-only inside.
 */
export async function prepareSandboxCommits(
  plan: TaskPlan,
  state: Pick<TaskState, "worktree" | "remote">,
): Promise<Record<string, string>> {
  if (!commitsThroughTaskObjects(plan, state) || !state.worktree) return {};
  try {
    return await prepareTaskCommits(state.worktree);
  } catch {
    // A worktree git cannot read: the run goes on, and its commits fail as before.
    return {};
  }
}

/**
 * After a sandboxed run in a worktree: what the agent committed is adopted into the project's store,
 * validated, before caesar snapshots anything; what cannot be is refused, and the finding says so (its
 * changes are then observed from the files alone).
 */
export async function adoptSandboxCommits(
  plan: TaskPlan,
  state: Pick<TaskState, "worktree" | "remote" | "base_ref" | "branch">,
): Promise<Finding[]> {
  if (!commitsThroughTaskObjects(plan, state) || !state.worktree || !state.base_ref) return [];
  let adoption: Awaited<ReturnType<typeof adoptTaskCommits>>;
  try {
    adoption = await adoptTaskCommits(state.worktree, state.base_ref, state.branch);
  } catch (error) {
    adoption = { kind: "refused", why: messageOf(error) };
  }
  if (adoption.kind !== "refused") return [];
  return [
    {
      severity: "high",
      title: "The agent's git commits were not adopted",
      detail: `${adoption.why}. Its HEAD was put back on the task's base and its index dropped: its changes are observed from its files alone.`,
    },
  ];
}
