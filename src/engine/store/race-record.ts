import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { isValidTaskId } from "../../protocol/ids.js";
import { writeJsonAtomic } from "../../support/atomic-file.js";
import { errnoOf, UsageError } from "../../support/errors.js";
import { randomHex } from "../../support/random.js";
import * as z from "../../support/zod.js";
import { projectPaths } from "./project.js";
import { RaceModeSchema } from "./task-plan.js";

/**
 * A race: one objective given to several agents, each in its own worktree, won on evidence — the first
 * contender whose checks all pass (`first`), or the best ranked once all have finished (`best`). Its
 * record names the contenders, so that whoever decides (the winner's conductor, a front end) can cancel
 * the others; the decision itself is computed from the contenders' own records.
 */

export const RaceRecordSchema = z.object({
  version: z.literal(1),
  id: z.string(),
  created_at: z.string(),
  mode: RaceModeSchema,
  objective: z.string(),
  /** The contenders' task ids, in the order they were asked for. */
  members: z.array(z.string()),
  /** The checks every contender runs (the same for all). */
  checks: z.array(z.string()),
});
export type RaceRecord = z.infer<typeof RaceRecordSchema>;

/** What the winner's conductor leaves when it claims the race (created once: the first claim wins). */
export interface RaceClaim {
  task_id: string;
  at: string;
}

const RACE_ID = /^r_[0-9a-f]{8}$/;

export function makeRaceId(): string {
  return `r_${randomHex(4)}`;
}

function racesDir(root: string): string {
  return join(projectPaths(root).state, "races");
}

function racePath(root: string, id: string): string {
  if (!RACE_ID.test(id)) {
    throw new UsageError("invalid_race_id", `Invalid race id ${JSON.stringify(id)}.`, {
      detail: "A race id is r_ and eight hex digits, as `caesar race` and caesar_race print it.",
    });
  }
  return join(racesDir(root), `${id}.json`);
}

export async function writeRace(root: string, record: RaceRecord): Promise<void> {
  await mkdir(racesDir(root), { recursive: true });
  await writeJsonAtomic(racePath(root, record.id), record);
}

export async function readRace(root: string, id: string): Promise<RaceRecord> {
  let text: string;
  try {
    text = await readFile(racePath(root, id), "utf8");
  } catch (error) {
    if (errnoOf(error) !== "ENOENT") throw error;
    throw new UsageError("race_not_found", `No race ${id} in this project.`, {
      detail: "Races are listed by the command that started them (`caesar race`, caesar_race).",
    });
  }
  const record = RaceRecordSchema.parse(JSON.parse(text));
  if (!record.members.every(isValidTaskId)) throw new Error(`race ${id} names an invalid task id`);
  return record;
}

/** Claim the race for `taskId`; true when this claim is the first (the file is created exclusively). */
export async function claimRace(root: string, id: string, taskId: string): Promise<boolean> {
  const claim: RaceClaim = { task_id: taskId, at: new Date().toISOString() };
  try {
    await writeFile(`${racePath(root, id).slice(0, -".json".length)}.winner`, JSON.stringify(claim), {
      flag: "wx",
    });
    return true;
  } catch (error) {
    if (errnoOf(error) === "EEXIST") return false;
    throw error;
  }
}

/** The claim on a race, when a contender made one. */
export async function readClaim(root: string, id: string): Promise<RaceClaim | undefined> {
  try {
    const raw = JSON.parse(
      await readFile(`${racePath(root, id).slice(0, -".json".length)}.winner`, "utf8"),
    ) as RaceClaim;
    return isValidTaskId(raw.task_id) ? raw : undefined;
  } catch {
    return undefined;
  }
}
