import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runNodeFlags } from "../../src/engine/conductor/launch.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { makeRepo, taskDir, tempDir, writeConfig } from "../helpers/repo.js";

// `caesar run` has its own entry (dist/cli/run.cjs, only `run` defined); every other command goes through
// dist/cli/main.js, with every command defined. bin/caesar.js picks one by the first argument.

const MAIN = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

/** A launcher that runs the full CLI's entry, whatever the command. */
function fullCliLauncher(): string {
  const launcher = join(tempDir("caesar-full-cli-"), "caesar");
  writeFileSync(launcher, `#!/bin/sh\nexec "${process.execPath}" "${MAIN}" "$@"\n`, { mode: 0o755 });
  return launcher;
}

describe("caesar run's own entry", () => {
  it("gives the same help and usage errors as the full CLI", async () => {
    const full = fullCliLauncher();
    for (const args of [
      ["run", "--help"],
      ["run", "--bogus", "x"],
      ["run"],
      ["run", "--json", "--mode", "x", "y"],
    ]) {
      const fast = await runCaesar(args);
      const slow = await runCaesar(args, { launcher: full });
      expect(fast, args.join(" ")).toEqual(slow);
    }
  });

  it("runs a task whose conductor started ahead of time, both processes traced", async () => {
    const root = makeRepo();
    writeConfig(root, "", ["conformant"]);
    const result = await runCaesar(["run", "--json", "--agent", "conformant", "Fix the parser"], {
      cwd: root,
      env: { CAESAR_TRACE: "1" },
    });
    expect(result.code, result.stderr).toBe(0);
    const body = parseJsonOutput<{ task_id: string; report: { summary: string } }>(result);
    expect(body.report.summary).toBe("Handled: Fix the parser");
    // The front end starts the conductor before it loads the rest of the CLI.
    const phases = [...result.stderr.matchAll(/^\[trace\] \d+ [\d.]+ \+\d+ [\d.]+ MiB (.*)$/gm)].map(
      (m) => m[1],
    );
    expect(phases.indexOf("conductor spawned")).toBeGreaterThanOrEqual(0);
    expect(phases.indexOf("conductor spawned")).toBeLessThan(phases.indexOf("main: start"));
    const log = readFileSync(join(taskDir(root, body.task_id), "conductor.log"), "utf8");
    expect(log).toContain("conductor: loaded, waiting for its task");
    expect(log).toMatch(/done; max RSS \d+ KiB, CPU \d+ ms/);
  });
});

describe("runNodeFlags", () => {
  it("turns the optimising compiler off unless CAESAR_NODE_FLAGS says otherwise", () => {
    expect(runNodeFlags({})).toEqual(["--no-opt"]);
    expect(runNodeFlags({ CAESAR_NODE_FLAGS: "" })).toEqual([]);
    expect(runNodeFlags({ CAESAR_NODE_FLAGS: "--no-opt  --max-semi-space-size=1" })).toEqual([
      "--no-opt",
      "--max-semi-space-size=1",
    ]);
  });
});
