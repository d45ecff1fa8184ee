import { execFile } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { tempDir } from "./repo.js";
import {
  findExecutable,
  isCi,
  leftOutByTier,
  leftOutSummary,
  missingLine,
  type Requirement,
  TMUX,
  testTier,
} from "./system-deps.js";

// The helper every suite with a system requirement goes through: it must not take a stand-in for the
// real thing (the fresh-machine proof hides programs behind empty files), and must find one off PATH.

function script(dir: string, name: string, body: string, mode = 0o755): string {
  const path = join(dir, name);
  writeFileSync(path, body);
  chmodSync(path, mode);
  return path;
}

describe("findExecutable", () => {
  it("passes over a file that is not executable, and an executable that is not the program", () => {
    const dir = tempDir();
    const hidden = script(dir, "hidden", "", 0o644);
    const empty = script(dir, "empty", ""); // run by the shell: exits 0, says nothing
    const other = script(dir, "other", "#!/bin/sh\necho 'something else 1.0'\n");
    const real = script(dir, "real", "#!/bin/sh\necho 'tmux 3.4'\n");
    expect(findExecutable([hidden, empty, other], ["-V"], /^tmux /)).toBeUndefined();
    expect(findExecutable([hidden, empty, other, real], ["-V"], /^tmux /)).toBe(real);
  });

  it("looks names up on PATH, in order, and takes paths as they are", () => {
    const first = tempDir();
    const second = tempDir();
    script(first, "prog", "#!/bin/sh\nexit 1\n");
    const good = script(second, "prog", "#!/bin/sh\necho 'prog 2'\n");
    const env = { PATH: `${first}:${second}` };
    expect(findExecutable(["prog"], ["--version"], /^prog /, env)).toBe(good);
    expect(findExecutable(["/nonexistent/prog", "prog"], ["--version"], /^prog /, env)).toBe(good);
    expect(findExecutable(["prog"], ["--version"], /^prog /, { PATH: first })).toBeUndefined();
  });
});

describe("what a missing requirement says", () => {
  it("names the requirement and how to install it, on one line", () => {
    const line = missingLine(TMUX);
    expect(line).toBe("skipped: needs tmux, not found; to run it: apt-get install tmux");
    expect(line).not.toContain("\n");
  });

  it("is a failure under CI=true (and CI=1), a skip otherwise", () => {
    expect(isCi({ CI: "true" })).toBe(true);
    expect(isCi({ CI: "1" })).toBe(true);
    expect(isCi({ CI: "false" })).toBe(false);
    expect(isCi({ CI: "" })).toBe(false);
    expect(isCi({})).toBe(false);
  });
});

describe("the test tiers", () => {
  const FULL_ONLY: Requirement = { what: "x", install: "y", find: () => "/x", fullTierOnly: true };
  const ANY_TIER: Requirement = { what: "x", install: "y", find: () => "/x" };

  it("is fast only when npm test says so; unset (a developer's vitest run) is all; anything else is refused", () => {
    expect(testTier({ CAESAR_TEST_TIER: "fast" })).toBe("fast");
    expect(testTier({ CAESAR_TEST_TIER: "all" })).toBe("all");
    expect(testTier({})).toBe("all");
    expect(() => testTier({ CAESAR_TEST_TIER: "quick" })).toThrow(/CAESAR_TEST_TIER=quick/);
  });

  it("leaves out the full tier's requirements in the fast tier only", () => {
    expect(leftOutByTier(FULL_ONLY, { CAESAR_TEST_TIER: "fast" })).toBe(true);
    expect(leftOutByTier(FULL_ONLY, { CAESAR_TEST_TIER: "all" })).toBe(false);
    expect(leftOutByTier(FULL_ONLY, {})).toBe(false);
    expect(leftOutByTier(ANY_TIER, { CAESAR_TEST_TIER: "fast" })).toBe(false);
  });
});

/**
 * The way a developer and CI meet it: a test run (vitest, with the project's global setup) of a suite and
 * a single test that need a program — test/fixtures/system-deps/needs-program.suite.ts.
 */
describe("a test run with a suite that needs a program", () => {
  const PACKAGE = fileURLToPath(new URL("../..", import.meta.url));
  const VITEST = join(PACKAGE, "node_modules", "vitest", "vitest.mjs");
  const CONFIG = join(PACKAGE, "test", "fixtures", "system-deps", "vitest.config.ts");
  const LINE = "skipped: needs needed-program, not found; to run it: put needed-program on PATH";

  function testRun(env: NodeJS.ProcessEnv): Promise<{ code: number; output: string; stderr: string }> {
    // Nothing of this run's own vitest or CI setting leaks into the one it starts.
    const base = Object.fromEntries(
      Object.entries(process.env).filter(
        ([key]) => !/^(VITEST|CI$|CAESAR_TEST_TIER$|NODE_OPTIONS$|TINYPOOL|FORCE_COLOR$)/.test(key),
      ),
    );
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [VITEST, "run", "--config", CONFIG, "--reporter=verbose"],
        { cwd: PACKAGE, env: { ...base, NO_COLOR: "1", ...env }, timeout: 120_000 },
        (error, stdout, stderr) =>
          resolve({
            code: error ? (typeof error.code === "number" ? error.code : -1) : 0,
            output: `${stdout}${stderr}`,
            stderr,
          }),
      );
    });
  }

  function withProgram(): string {
    const dir = tempDir();
    script(dir, "needed-program", "#!/bin/sh\necho 'needed-program 1.0'\n");
    return dir;
  }

  it("runs both when the program is on PATH, and prints no skip line", async () => {
    const run = await testRun({ PATH: `${withProgram()}${delimiter}${process.env.PATH}` });
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/Tests\s+2 passed \(2\)/);
    expect(run.output).not.toContain("skipped: needs");
  }, 150_000);

  it("without it, skips both and says once, on one line at the end, what to install", async () => {
    const run = await testRun({ NEEDED_PROGRAM: "/nonexistent/needed-program" });
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/Tests\s+2 skipped \(2\)/);
    // The same requirement twice (a suite and a test): one line, printed after the run's summary.
    expect(run.stderr.split("\n").filter((line) => line === LINE)).toHaveLength(1);
    expect(run.output.lastIndexOf(LINE)).toBeGreaterThan(run.output.lastIndexOf("Tests "));
  }, 150_000);

  it("npm test (the fast tier) leaves a full-tier suite out even where the program is, and says so once", async () => {
    const run = await testRun({
      CI: "true", // a suite the tier leaves out is not a missing dependency: CI=true changes nothing
      CAESAR_TEST_TIER: "fast",
      NEEDED_FULL_TIER_ONLY: "1",
      PATH: `${withProgram()}${delimiter}${process.env.PATH}`,
    });
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/Tests\s+2 skipped \(2\)/);
    const summary = leftOutSummary(["needed-program"]);
    expect(run.stderr.split("\n").filter((line) => line === summary)).toHaveLength(1);
    expect(run.output.lastIndexOf(summary)).toBeGreaterThan(run.output.lastIndexOf("Tests "));
    expect(run.output).not.toContain("skipped: needs");
  }, 150_000);

  it("names each need once in its summary, a suite's that includes another's too", () => {
    expect(leftOutSummary(["a Chromium", "the CLIs", "the CLIs and bubblewrap", "root and setpriv"])).toBe(
      "npm test left out the suites that need a Chromium, the CLIs, bubblewrap and root and setpriv; npm run test:all runs them (the README says what it installs)",
    );
  });

  it("npm run test:all (the full tier) runs a full-tier suite", async () => {
    const run = await testRun({
      CAESAR_TEST_TIER: "all",
      NEEDED_FULL_TIER_ONLY: "1",
      PATH: `${withProgram()}${delimiter}${process.env.PATH}`,
    });
    expect(run.code, run.output).toBe(0);
    expect(run.output).toMatch(/Tests\s+2 passed \(2\)/);
    expect(run.output).not.toContain("npm test left out");
  }, 150_000);

  it("under CI=true, fails both, saying what is missing and why it is a failure", async () => {
    const run = await testRun({ CI: "true", NEEDED_PROGRAM: "/nonexistent/needed-program" });
    expect(run.code, run.output).not.toBe(0);
    expect(run.output).toMatch(/Tests\s+2 failed \(2\)/);
    expect(run.output).toContain(
      "needs needed-program, not found; to run it: put needed-program on PATH — CI runs every suite, so this is a failure",
    );
    expect(run.stderr).not.toContain(LINE);
  }, 150_000);
});
