import { join } from "node:path";
import { isLockHeld, lockHolder, lockRecordPath } from "../../support/lock.js";
import { projectPaths } from "../store/project.js";

/**
 * The relay is the conductor of a project's remote tasks on the machine that sent them: one process per
 * project (`caesar cluster relay`, in cluster/) that mirrors what workers publish into the task
 * directories and carries cancels and answers back. Submitting starts it; any command that reads a remote
 * task whose relay is gone starts it again, through the launcher the CLI installed — the task itself
 * lives on in the cluster.
 */
export function relayPaths(root: string): { lock: string; owner: string; log: string } {
  const state = projectPaths(root).state;
  const lock = join(state, "relay.lock");
  return { lock, owner: lockRecordPath(lock), log: join(state, "relay.log") };
}

/**
 * Is a relay alive for this project: its lock recorded and held, by the lock's rule? When in doubt (a
 * lock without a readable holder), no: a relay started then finds the lock taken and exits at once.
 */
export function isRelayRunning(root: string): boolean {
  const { lock } = relayPaths(root);
  return lockHolder(lock) !== undefined && isLockHeld(lock);
}

/** Starts a project's relay process; the cluster layer provides it (see setRelayLauncher). */
export type RelayLauncher = (root: string) => void;

let launcher: RelayLauncher | undefined;

/**
 * The relay is the cluster's (cluster/relay), above the engine: the process entry that has the cluster
 * (the CLI) hands the engine its launcher, so that the engine's readers can start a relay again without
 * depending upwards. Without one (caesar used as a library), a relay gone stays gone until a command does.
 */
export function setRelayLauncher(launch: RelayLauncher): void {
  launcher = launch;
}

/**
 * Start the project's relay unless one runs. Two callers racing start two: the second finds the lock
 * taken and exits at once.
 */
export function ensureRelay(root: string): void {
  if (isRelayRunning(root)) return;
  launcher?.(root);
}
