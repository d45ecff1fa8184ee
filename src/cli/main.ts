/** The CLI's entry point as an ES module (dist/cli/main.js, loaded by bin/caesar.js); see program.ts. */
import { main } from "./program.js";
import { COMMANDS } from "./registry.js";

process.exitCode = await main(process.argv, COMMANDS);
