import { join } from "node:path";
import { controlOfTaskDir } from "../store/control.js";

/**
 * Where an agent's output files go (agent-output.ts): beside caesar's record of the task, in the control
 * directory — outside what the agent's sandbox opens for writing, and out of reach of a rewrite of its task
 * directory — or, for a task directory caesar did not make, in its runtime/ folder.
 */
export function agentOutputDir(dir: string): string {
  const control = controlOfTaskDir(dir);
  return control ? join(control.dir, "agent") : join(dir, "runtime", "agent");
}
