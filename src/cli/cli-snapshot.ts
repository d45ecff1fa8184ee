/**
 * `caesar run`'s entry point as a V8 startup snapshot (see support/startup-snapshot.ts), started by
 * bin/caesar when the snapshot matches this Node. Everything imported here is evaluated once, at build
 * time, so `caesar run` starts about as fast as a bare `node` and its conductor's start-up overlaps with
 * all of its work. Only `run` lives here — the command where start-up is on every delegation's path — so
 * the snapshot stays small; every other command starts from the ES module bundle.
 */
import { startupSnapshot } from "node:v8";
import { prepareConductorEarly } from "../engine/conductor-launch.js";
import { trace } from "../support/trace.js";
import { runCommand } from "./commands/run.js";
import { main } from "./program.js";
import "./run/run-task.js";
import { warmUp } from "../engine/warm-up.js";

warmUp();

startupSnapshot.setDeserializeMainFunction(() => {
  trace("cli: from snapshot");
  prepareConductorEarly(process.argv);
  void main(process.argv, [runCommand]).then((code) => {
    process.exitCode = code;
  });
});
