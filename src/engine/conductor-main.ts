/**
 * The conductor's entry point (built to dist/engine/conductor.cjs; see conductor/process.ts). It sits
 * above the engine's rooms to compose them: the conductor settles its task's race (race/) once the task
 * has finished, though the conductor's room may not import the rooms below it.
 */
import { runConductorProcess } from "./conductor/process.js";
import { settleRace } from "./race/race.js";

void runConductorProcess(process.argv, {
  settled: (plan, final) => (plan.race ? settleRace(plan.root, plan.race, final) : Promise.resolve()),
});
