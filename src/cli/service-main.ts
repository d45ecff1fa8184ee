/**
 * The conductor service's own entry point (dist/service/main.js, bundled on its own), which front ends start detached
 * (engine/conductor/service-client.ts): `node --max-semi-space-size=1 --no-opt dist/service/main.js --root <project> [--idle <duration>]`.
 * It loads the service and what it conducts with, not the command line's parser and every command's
 * definition: about 7 MiB less for a process that stays. `caesar service run` runs the same service in the
 * foreground (service-run.ts).
 */
import { parseArgs } from "node:util";
import { launchRelay } from "../cluster/relay/launch.js";
import { findProjectRoot } from "../config/project-root.js";
import { setRelayLauncher } from "../engine/conductor/relay.js";
import { messageOf } from "../support/errors.js";
import { serveProject } from "./service-run.js";

// A reader of a remote task whose relay is gone starts it again (as in every caesar command).
setRelayLauncher(launchRelay);

try {
  const { values } = parseArgs({
    options: { root: { type: "string" }, idle: { type: "string" } },
    strict: true,
  });
  await serveProject(findProjectRoot(process.cwd(), values.root), values.idle);
} catch (error) {
  process.stderr.write(`${new Date().toISOString()} [service] could not start: ${messageOf(error)}\n`);
  process.exit(1);
}
