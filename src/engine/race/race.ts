import { checksVerdict } from "../../protocol/checks.js";
import { type ContenderRow, compareTasks } from "../follow/compare-tasks.js";
import { cancelTask } from "../lifecycle/cancel.js";
import { loadLiveTask } from "../lifecycle/live-task.js";
import { startTasks } from "../lifecycle/start.js";
import {
  claimRace,
  makeRaceId,
  type RaceRecord,
  readClaim,
  readRace,
  writeRace,
} from "../store/race-record.js";
import type { TaskState } from "../store/state.js";
import type { RaceMode, RaceRef, TaskPlan } from "../store/task-plan.js";
import type { TaskRecord } from "../store/task-store.js";
import { decideRace, type RaceDecision } from "./decide.js";

/** The most contenders one race starts (each is a whole agent run). */
export const RACE_MAX_AGENTS = 8;

export interface RaceLook {
  race: RaceRecord;
  /** The contenders as a comparison shows them, in the order asked. */
  comparison: ContenderRow[];
  decision: RaceDecision;
  /** Contenders cancelled because another won (`first` mode). */
  cancelled: string[];
}

/** How a race's contenders start, all or none: `startTasks` here, or a front end's (to a cluster). */
export type StartTasks = (
  plans: TaskPlan[],
  options: { beforeLaunch?: (created: TaskRecord[]) => Promise<void> },
) => Promise<TaskRecord[]>;

/**
 * Start a race: every contender's plan names the race, the record names every contender, then the
 * contenders start. A contender that finished with every check passing before the last one started has
 * already claimed the race: the ones started after are cancelled at once.
 */
export async function startRace(
  root: string,
  input: { plans: TaskPlan[]; mode: RaceMode; objective: string },
  start: StartTasks = startTasks,
): Promise<{ race: RaceRecord; records: TaskRecord[] }> {
  const id = makeRaceId();
  const ref: RaceRef = { id, mode: input.mode };
  const race: RaceRecord = {
    version: 1,
    id,
    created_at: new Date().toISOString(),
    mode: input.mode,
    objective: input.objective,
    members: [],
    checks: input.plans[0]?.checks.map((check) => check.command) ?? [],
  };
  // All or none (every contender admitted and its budget place reserved before any runs); the record
  // names every contender before the first one starts, so whichever finishes first can settle the race.
  const records = await start(
    input.plans.map((plan) => ({ ...plan, race: ref })),
    {
      beforeLaunch: async (created) => {
        race.members = created.map((record) => record.id);
        await writeRace(root, race);
      },
    },
  );
  if (input.mode === "first") await cancelLosers(root, race, `race ${id}`);
  return { race, records };
}

/**
 * After a contender's final state: in a `first` race, one whose checks all passed claims the race (the
 * first claim wins) and cancels the contenders still running. Called by the contender's conductor, so a
 * race is settled even when nobody is watching it.
 */
export async function settleRace(root: string, ref: RaceRef, final: TaskState): Promise<void> {
  if (ref.mode !== "first" || checksVerdict(final.report?.checks).state !== "passed") return;
  if (!(await claimRace(root, ref.id, final.id))) return;
  await cancelLosers(root, await readRace(root, ref.id), `race ${ref.id}: ${final.id} won`);
}

/** Cancel the contenders still running once the race has a claimed winner; returns those cancelled. */
async function cancelLosers(root: string, race: RaceRecord, by: string): Promise<string[]> {
  const claim = await readClaim(root, race.id);
  if (!claim) return [];
  const losers = race.members.filter((id) => id !== claim.task_id);
  const cancelled = await Promise.all(
    losers.map(async (id) => {
      const record = await loadLiveTask(root, id, "race").catch(() => undefined);
      if (!record || record.state.phase === "finished") return undefined;
      const { changed } = await cancelTask(record, by).catch(() => ({ changed: false }));
      return changed ? id : undefined;
    }),
  );
  return cancelled.filter((id): id is string => id !== undefined);
}

/** Where a race stands: its contenders compared, and its decision with the reasons. */
export async function lookAtRace(root: string, id: string): Promise<RaceLook> {
  const race = await readRace(root, id);
  const records = await Promise.all(race.members.map((member) => loadLiveTask(root, member, "race")));
  const comparison = await compareTasks(records);
  const claim = await readClaim(root, id);
  const decision = decideRace(race, comparison, claim);
  const cancelled = comparison
    .filter(
      (row) => row.outcome === "cancelled" && decision.winner !== null && row.task_id !== decision.winner,
    )
    .map((row) => row.task_id);
  return { race, comparison, decision, cancelled };
}
