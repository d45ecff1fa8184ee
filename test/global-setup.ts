import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import {
  AGENT_CLI_BIN_DIR,
  AGENT_CLIS_DIR,
  isCi,
  LEFT_OUT_PREFIX,
  leftOutSummary,
  PINNED_AGENT_CLIS,
  testTier,
} from "./helpers/system-deps.js";

const PACKAGE = fileURLToPath(new URL("..", import.meta.url));

/**
 * Before any test:
 * - caesar's global configuration layer is empty (see below);
 * - every temporary file of the run — the tests' repositories, and whatever caesar and the agents they
 *   start create under $TMPDIR — goes into one directory, removed when the run ends: running the suite
 *   leaves nothing in the machine's /tmp (CAESAR_KEEP_TEST_TMP=1 keeps it, and prints where);
 * - dist/ is rebuilt when src/ is newer: end-to-end tests run the CLI users run, never a stale one;
 * - the pinned agent CLIs are installed when a selected suite drives them and they are missing — never
 *   by `npm test` (CAESAR_TEST_TIER=fast), which leaves those suites to `npm run test:all`.
 * After the last test, the suites skipped for something missing say so, one line each, and those the
 * tier left out say so in one line (test/helpers/system-deps.ts).
 */
export default async function setup(project: TestProject): Promise<() => void> {
  const scratch = mkdtempSync(join(tmpdir(), "caesar-tests-"));
  process.env.TMPDIR = scratch;
  // caesar's global configuration layer for the run: empty, so no configuration of the person running the
  // tests applies, and every suite runs under caesar's defaults — the OS sandbox's included ([sandbox] mode
  // = "auto": sandboxed where bubblewrap can run, else unsandboxed with a high finding on each task).
  const configHome = join(scratch, "config");
  mkdirSync(join(configHome, "caesar"), { recursive: true });
  process.env.XDG_CONFIG_HOME = configHome;
  // Agent CLIs' own state in live suites lives outside every temporary directory (test/helpers/agent-state.ts).
  const agentState = join(homedir(), ".cache", "caesar-tests", basename(scratch));
  mkdirSync(agentState, { recursive: true });
  process.env.CAESAR_TEST_STATE = agentState;
  const notes = join(scratch, "missing.txt");
  process.env.CAESAR_TEST_NOTES = notes;
  const tier = testTier();
  rebuildIfStale();
  if (tier === "all" && (await selectedFilesMention(project, /live-agent\.js|live-suite\.js|agent-clis/)))
    await installAgentClis();
  return () => {
    if (existsSync(notes)) {
      const lines = new Set(readFileSync(notes, "utf8").split("\n").filter(Boolean));
      const leftOut = [...lines].filter((line) => line.startsWith(LEFT_OUT_PREFIX));
      for (const line of lines) if (!line.startsWith(LEFT_OUT_PREFIX)) process.stderr.write(`${line}\n`);
      if (leftOut.length > 0)
        process.stderr.write(
          `${leftOutSummary(leftOut.map((line) => line.slice(LEFT_OUT_PREFIX.length)).sort())}\n`,
        );
    }
    if (process.env.CAESAR_KEEP_TEST_TMP === "1") {
      process.stderr.write(`test files kept in ${scratch}\n`);
      return;
    }
    rmSync(scratch, { recursive: true, force: true, maxRetries: 3 });
    rmSync(agentState, { recursive: true, force: true, maxRetries: 3 });
  };
}

/** What the bundles are built from. */
const BUILD_INPUTS = ["src", "scripts", "package-lock.json"];
/** Written by scripts/build.mjs when a build completes, dated when it started. */
const BUILD_STAMP = join(PACKAGE, "dist", "build-stamp");

function newestInput(path: string): { path: string; mtimeMs: number } {
  const stat = statSync(path);
  if (!stat.isDirectory()) return { path, mtimeMs: stat.mtimeMs };
  let newest = { path, mtimeMs: 0 };
  for (const entry of readdirSync(path)) {
    const candidate = newestInput(join(path, entry));
    if (candidate.mtimeMs > newest.mtimeMs) newest = candidate;
  }
  return newest;
}

/** dist/ older than what it is built from (or never completed) is rebuilt, loudly; a failed build stops the run. */
function rebuildIfStale(): void {
  const built = existsSync(BUILD_STAMP) ? statSync(BUILD_STAMP).mtimeMs : 0;
  const newest = BUILD_INPUTS.map((input) => newestInput(join(PACKAGE, input))).reduce((a, b) =>
    b.mtimeMs > a.mtimeMs ? b : a,
  );
  if (built >= newest.mtimeMs) return;
  const why =
    built === 0
      ? "dist/ was never built completely"
      : `${relative(PACKAGE, newest.path)} is newer than dist/`;
  process.stderr.write(`${why}: rebuilding it (npm run build) so end-to-end tests run the current code\n`);
  const build = spawnSync(process.execPath, [join(PACKAGE, "scripts", "build.mjs")], {
    cwd: PACKAGE,
    stdio: "inherit",
  });
  if (build.status !== 0)
    throw new Error("npm run build failed: the end-to-end tests would run a stale dist/");
}

/** Does a test file of this run contain `pattern` (all files when no filter was given)? */
async function selectedFilesMention(project: TestProject, pattern: RegExp): Promise<boolean> {
  // The command line's file filters (`vitest run test/ui`); none: every file.
  const filters = (project.vitest as unknown as { filenamePattern?: unknown }).filenamePattern;
  const { testFiles } = await project.globTestFiles(
    Array.isArray(filters) && filters.every((f) => typeof f === "string") ? filters : undefined,
  );
  return testFiles.some((file) => pattern.test(readFileSync(file, "utf8")));
}

function run(command: string, args: string[]): Promise<{ ok: boolean; output: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: PACKAGE, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ ok: !error, output: `${stdout}${stderr}` }),
    );
  });
}

/**
 * What npm can provide, the test run provides: `npm ci --prefix test/agent-clis` (then `npm install`, as
 * .ci/run does: a registry mirror may lack another platform's optional packages). If both fail, the live
 * suites skip, saying so — except under CI=true, where the run stops here.
 */
async function installAgentClis(): Promise<void> {
  if (PINNED_AGENT_CLIS.every((cli) => existsSync(join(AGENT_CLI_BIN_DIR, cli)))) return;
  process.stderr.write(
    "installing the pinned agent CLIs for the live suites: npm ci --prefix test/agent-clis (once, ≈ 1.5 GB)\n",
  );
  const flags = [
    "--prefix",
    relative(PACKAGE, AGENT_CLIS_DIR),
    "--no-audit",
    "--no-fund",
    "--fetch-retries=1",
  ];
  let result = await run("npm", ["ci", ...flags]);
  if (!result.ok) result = await run("npm", ["install", ...flags]);
  if (result.ok) return;
  const cause =
    result.output
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => /^npm (error|ERR!)/.test(line))
      .slice(0, 2)
      .join(" / ") || result.output.trim().split("\n").pop();
  const line = `could not install the pinned agent CLIs (${cause}); the live suites need them`;
  if (isCi()) throw new Error(`${line} — CI runs every suite`);
  process.stderr.write(`${line}: they will skip\n`);
}
