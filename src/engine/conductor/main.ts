/** The conductor's entry point (built to dist/engine/conductor.cjs); see process.ts. */
import { runConductorProcess } from "./process.js";

void runConductorProcess(process.argv);
