import { spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { relayPaths } from "../../engine/conductor/relay.js";
import { projectPaths } from "../../engine/store/project.js";
import { CAESAR_BIN } from "../../support/package-paths.js";
import { makePrivateDirSync } from "../../support/private-dir.js";

/**
 * Start a project's relay (`caesar cluster relay`) detached, its output appended to the relay's log.
 * The engine reaches this only through the launcher the CLI installs (engine/conductor/relay.ts).
 */
export function launchRelay(root: string): void {
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
  } finally {
    closeSync(log);
  }
}
