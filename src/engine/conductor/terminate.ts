import { isGroupAlive, signalGroup } from "../../support/process.js";

/** How long a process group gets between SIGTERM and SIGKILL. */
export const KILL_GRACE_MS = 5000;

const POLL_MS = 50;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitGroupGone(pgid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!isGroupAlive(pgid)) return true;
    await sleep(POLL_MS);
  }
  return !isGroupAlive(pgid);
}

/**
 * End a whole process group — the agent and every grandchild it started: SIGTERM, a grace delay,
 * then SIGKILL. Resolves once the group is gone (or SIGKILL was sent and had time to land).
 */
export async function terminateGroup(
  pgid: number,
  graceMs = KILL_GRACE_MS,
): Promise<"none" | "terminated" | "killed"> {
  if (!isGroupAlive(pgid)) return "none";
  signalGroup(pgid, "SIGTERM");
  if (await waitGroupGone(pgid, graceMs)) return "terminated";
  signalGroup(pgid, "SIGKILL");
  await waitGroupGone(pgid, 2000);
  return "killed";
}
