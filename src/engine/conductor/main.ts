/** The conductor's entry point (built to dist/engine/conductor.js); see process.ts. */
import { runConductorProcess } from "./process.js";

await runConductorProcess(process.argv);
