import type { PreparedConductor } from "../engine/conductor/launch.js";
import { startTask, startTasks } from "../engine/lifecycle/start.js";
import type { TaskPlan } from "../engine/store/task-plan.js";
import type { TaskRecord } from "../engine/store/task-store.js";
import { UsageError } from "../support/errors.js";

/**
 * Start a planned task where its plan says: on this machine under its own conductor, or on the cluster's
 * workers (`plan.remote`). Every front end starts tasks through this. The NATS client is loaded only for
 * a remote task: a local `caesar run` pays nothing for the cluster.
 */
export async function startPlannedTask(
  plan: TaskPlan,
  options: { conductor?: PreparedConductor } = {},
): Promise<TaskRecord> {
  if (!plan.remote) return startTask(plan, options);
  options.conductor?.abandon();
  const { submitRemoteTask } = await import("./submit.js");
  return submitRemoteTask(plan);
}

/**
 * Start several planned tasks all or none (a fan-out, a race's contenders), where their plans say: all on
 * this machine (`startTasks`), or all on one cluster — never some here and some there, since one budget
 * reservation covers them all.
 */
export async function startPlannedTasks(
  plans: TaskPlan[],
  options: { beforeLaunch?: (created: TaskRecord[]) => Promise<void> } = {},
): Promise<TaskRecord[]> {
  const remote = plans.filter((plan) => plan.remote !== null).length;
  if (remote === 0) return startTasks(plans, options);
  if (remote !== plans.length)
    throw new UsageError("cluster_mixed", "Some of these tasks would run here and some on a cluster.", {
      detail: "Send all the tasks of one fan-out or race to one place: pass the same --on (or none) for all.",
    });
  const { submitRemoteTasks } = await import("./submit.js");
  return submitRemoteTasks(plans, options);
}
