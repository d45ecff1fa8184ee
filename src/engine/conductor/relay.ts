import { spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { join } from "node:path";
import { isLockHeld, lockHolder, lockRecordPath } from "../../support/lock.js";
import { CAESAR_BIN } from "../../support/package-paths.js";
import { makePrivateDirSync } from "../../support/private-dir.js";
import { projectPaths } from "../store/project.js";

/**
 * The relay is the conductor of a project's remote tasks on the machine that sent them: one process per
 * project (`caesar cluster relay`, in cluster/) that mirrors what workers publish into the task
 * directories and carries cancels and answers back. Front ends start it; any command that reads a remote
 * task whose relay is gone starts it again — the task itself lives on in the cluster.
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

/**
 * Start the project's relay unless one runs. Two callers racing start two: the second finds the lock
 * taken and exits at once.
 */
export function ensureRelay(root: string): number | undefined {
  if (isRelayRunning(root)) return undefined;
  const paths = relayPaths(root);
  makePrivateDirSync(projectPaths(root).state);
  const log = openSync(paths.log, "a", 0o600);
  try {
    const child = spawn(process.execPath, [CAESAR_BIN, "cluster", "relay", "--root", root], {
      cwd: root,
      detached: true,
      stdio: ["ignore", log, log],
      env: process.env,
    });
    child.unref();
    child.on("error", () => {});
    return child.pid;
  } finally {
    closeSync(log);
  }
}
