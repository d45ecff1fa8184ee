/**
 * The CLI's entry point as an ES module (dist/cli/main.js, loaded by bin/caesar.js); see program.ts.
 * `caesar run` has its own entry, run/main.ts (dist/cli/run.js), which bin/caesar.js loads instead.
 */
import { main } from "./program.js";
import { COMMANDS } from "./registry.js";

process.exitCode = await main(process.argv, COMMANDS);
