// The lookups moved below the front ends (src/engine/live-task.ts); re-exported for the commands.
export { loadLiveTask, readPlan } from "../engine/live-task.js";
