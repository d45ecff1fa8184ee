import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../../support/atomic-file.js";
import { controlOfTaskDir } from "../store/control.js";

const ENV_FILE = "env.json";

/**
 * The environment a task's agent inherits is the one of the front end that asked for it (the person's
 * shell: their PATH, their provider keys), not the conductor service's, which another shell started. The
 * front end records it beside caesar's record of the task — in the control directory, readable by its
 * owner only (0600) — so that any conductor of the task, a later one too, starts the agent with it. It is
 * removed when the task ends. Tasks without a control record (not caesar's) have none.
 */
export async function writeTaskEnvironment(dir: string, env: NodeJS.ProcessEnv): Promise<void> {
  const control = controlOfTaskDir(dir);
  if (!control) return;
  const clean: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) clean[name] = value;
  await writeFileAtomic(join(control.dir, ENV_FILE), JSON.stringify(clean), { mode: 0o600 });
}

export async function readTaskEnvironment(dir: string): Promise<NodeJS.ProcessEnv | undefined> {
  const control = controlOfTaskDir(dir);
  if (!control) return undefined;
  try {
    const parsed = JSON.parse(await readFile(join(control.dir, ENV_FILE), "utf8")) as unknown;
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined;
    const env: NodeJS.ProcessEnv = {};
    for (const [name, value] of Object.entries(parsed)) if (typeof value === "string") env[name] = value;
    return env;
  } catch {
    return undefined;
  }
}

export async function removeTaskEnvironment(dir: string): Promise<void> {
  const control = controlOfTaskDir(dir);
  if (control) await rm(join(control.dir, ENV_FILE), { force: true });
}
