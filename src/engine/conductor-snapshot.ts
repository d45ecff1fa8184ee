/**
 * The conductor's entry point as a V8 startup snapshot (see support/startup-snapshot.ts): evaluated once at
 * build time, so starting a conductor costs no more than starting Node. `argv[1]` is the script path the
 * launcher passes for symmetry with conductor-main.ts.
 */
import { startupSnapshot } from "node:v8";
import { runConductorProcess } from "./conductor-process.js";
import { warmUp } from "./warm-up.js";

warmUp();

startupSnapshot.setDeserializeMainFunction(() => {
  void runConductorProcess(process.argv, "snapshot");
});
