import { admitAll } from "../engine/lifecycle/admit.js";
import { type Caller, governed } from "../engine/lifecycle/caller.js";
import type { DelegationRequest } from "../engine/lifecycle/request.js";
import { startTask, startTasks } from "../engine/lifecycle/start.js";
import type { startRace } from "../engine/race/race.js";
import type { RaceMode, TaskPlan } from "../engine/store/task-plan.js";
import type { TaskRecord } from "../engine/store/task-store.js";
import { UsageError } from "../support/errors.js";

/**
 * Start a planned task where its plan says: on this machine under the project's conductor service, or on the cluster's
 * workers (`plan.remote`). Every front end starts tasks through this. The NATS client is loaded only for
 * a remote task: a local `caesar run` pays nothing for the cluster.
 */
export async function startPlannedTask(plan: TaskPlan): Promise<TaskRecord> {
  if (!plan.remote) return startTask(plan);
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

/**
 * Start a race for a proven caller, as every front end does: admit each contender (all or none, under
 * the caller's governance), then start them all where their plans say, the race's record naming them all
 * before any runs.
 */
export function startGovernedRace(input: {
  context: { root: string; env?: NodeJS.ProcessEnv; cwd?: string };
  caller: Caller;
  action: string;
  objective: string;
  agents: string[];
  mode: RaceMode;
  requestFor: (agent: string) => DelegationRequest;
}): Promise<Awaited<ReturnType<typeof startRace>> & { plans: TaskPlan[] }> {
  const { context, caller, objective } = input;
  return governed(caller, input.action, async () => {
    const plans = await admitAll(
      input.agents.map((agent) => ({
        objective: `${agent}: ${objective}`,
        build: () => input.requestFor(agent),
      })),
      context,
      caller,
    );
    // Loaded for a race only: it brings the whole of cancellation, which a single `caesar run` never needs.
    const race = await import("../engine/race/race.js");
    const contenders = plans.map(({ plan }) => plan);
    const started = await race.startRace(
      context.root,
      { plans: contenders, mode: input.mode, objective },
      startPlannedTasks,
    );
    return { ...started, plans: contenders };
  });
}
