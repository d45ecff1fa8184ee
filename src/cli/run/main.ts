/**
 * `caesar run`'s own entry point (dist/cli/run.cjs, one CommonJS file that bin/caesar.js loads for `run`
 * instead of dist/cli/main.js). Every `caesar run` needs two Node processes, so this one starts the
 * conductor's first, before it loads anything else: the conductor's start-up then overlaps with all of the
 * front end's work. The rest comes in through import() — evaluated only then — and only `run` is
 * defined: `caesar run …` parses, helps and fails exactly as with every command defined.
 */
import { setFlagsFromString } from "node:v8";
import { prepareConductorEarly, runNodeFlags } from "../../engine/conductor/launch.js";

// Before any of caesar's code runs: no optimising compiler, like the conductor (see runNodeFlags).
setFlagsFromString(runNodeFlags().join(" "));
prepareConductorEarly(process.argv);
void Promise.all([import("../program.js"), import("../commands/run.js")]).then(
  async ([{ main }, { runCommand }]) => {
    process.exitCode = await main(process.argv, [runCommand]);
  },
);
