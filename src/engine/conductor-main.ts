/** The conductor's entry point as an ES module (dist/engine/conductor-main.js); see conductor-process.ts. */
import { runConductorProcess } from "./conductor-process.js";

await runConductorProcess(process.argv, "module");
