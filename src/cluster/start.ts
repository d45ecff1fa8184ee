import type { PreparedConductor } from "../engine/conductor/launch.js";
import { startTask } from "../engine/lifecycle/start.js";
import type { TaskPlan } from "../engine/store/task-plan.js";
import type { TaskRecord } from "../engine/store/task-store.js";

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
