import { spawnSync } from "node:child_process";
import { accessSync, appendFileSync, constants, existsSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it } from "vitest";

/**
 * What some suites need beyond Node, git and npm — a program of the system (Chromium, tmux, jq), or
 * the pinned agent CLIs npm installs — found where it usually lives. A suite that cannot find it gets one
 * skipped test whose title says what to install, and the same line is printed once at the end of the run
 * (test/global-setup.ts). Under CI=true the suite fails instead: CI proves every suite.
 */
export interface Requirement {
  /** What the suite needs, for the skip line: "a Chromium", "tmux". */
  what: string;
  /** How to get it, for the skip line. */
  install: string;
  /** The path of a working one, or undefined. Cached: each suite file asks once. */
  find(): string | undefined;
}

/** Is this a CI run (CI=true, as .ci/run and CI services set it)? There, a missing requirement fails. */
export function isCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.CI?.toLowerCase();
  return value !== undefined && value !== "" && value !== "0" && value !== "false";
}

/** The first candidate that is an executable file and answers `versionArgs` with `expected`. */
export function findExecutable(
  candidates: readonly string[],
  versionArgs: readonly string[],
  expected: RegExp,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const dirs = (env.PATH ?? "").split(delimiter).filter(Boolean);
  const seen = new Set<string>();
  for (const candidate of candidates) {
    const paths = candidate.includes("/") ? [candidate] : dirs.map((dir) => join(dir, candidate));
    for (const path of paths) {
      if (seen.has(path)) continue;
      seen.add(path);
      if (!isExecutableFile(path)) continue;
      // Something executable is there; make sure it is what it claims (an empty file run by the shell is not).
      const run = spawnSync(path, [...versionArgs], { encoding: "utf8", timeout: 30_000, env });
      if (run.status === 0 && expected.test(`${run.stdout}${run.stderr}`)) return path;
    }
  }
  return undefined;
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return existsSync(path);
  } catch {
    return false;
  }
}

function cached(find: () => string | undefined): () => string | undefined {
  let found: { path: string | undefined } | undefined;
  return () => {
    found ??= { path: find() };
    return found.path;
  };
}

/** A Chromium or Chrome for Playwright (never a downloaded browser): CHROME_PATH, PATH, the usual places. */
export const CHROMIUM: Requirement = {
  what: "a Chromium",
  install: "apt-get install chromium (or set CHROME_PATH to a Chrome or Chromium)",
  find: cached(() =>
    findExecutable(
      [
        ...(process.env.CHROME_PATH ? [process.env.CHROME_PATH] : []),
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/snap/bin/chromium",
        "/usr/bin/google-chrome",
        "/Applications/Chromium.app/Contents/MacOS/Chromium",
        "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
      ],
      ["--version"],
      /Chromium|Chrome/,
    ),
  ),
};

/** tmux, for the terminal suites. */
export const TMUX: Requirement = {
  what: "tmux",
  install: "apt-get install tmux",
  find: cached(() =>
    findExecutable(
      ["tmux", "/usr/bin/tmux", "/usr/local/bin/tmux", "/opt/homebrew/bin/tmux"],
      ["-V"],
      /^tmux /,
    ),
  ),
};

/** jq, for the README's own agent (a ten-line bash script with jq); the other fixture agents use Node. */
export const JQ: Requirement = {
  what: "jq",
  install: "apt-get install jq",
  find: cached(() =>
    findExecutable(["jq", "/usr/bin/jq", "/usr/local/bin/jq", "/opt/homebrew/bin/jq"], ["--version"], /^jq-/),
  ),
};

/** Where npm installs the pinned agent CLIs the live suites drive (test/agent-clis/package.json). */
export const AGENT_CLIS_DIR = fileURLToPath(new URL("../agent-clis/", import.meta.url));
export const AGENT_CLI_BIN_DIR = join(AGENT_CLIS_DIR, "node_modules", ".bin");
/** Every CLI of test/agent-clis/package.json, by the name of its executable. */
export const PINNED_AGENT_CLIS = ["claude", "codex", "copilot", "gemini", "opencode"] as const;

/**
 * One pinned agent CLI. The test run installs them when a live suite is selected (test/global-setup.ts);
 * this is what is left when it could not (no registry, say).
 */
export function pinnedAgentCli(cli: string): Requirement {
  return {
    // The same line for every CLI: one install brings them all.
    what: "the pinned agent CLIs (test/agent-clis)",
    install: "npm ci --prefix test/agent-clis (the test run tries it itself; is the npm registry reachable?)",
    find: () => {
      const path = join(AGENT_CLI_BIN_DIR, cli);
      return isExecutableFile(path) ? path : undefined;
    },
  };
}

/** The line a missing requirement prints, and the title of the test that stands for its suite. */
export function missingLine(requirement: Requirement): string {
  return `skipped: needs ${requirement.what}, not found; to run it: ${requirement.install}`;
}

/**
 * For a suite whose requirement is missing, inside its describe: one skipped test saying what to
 * install (noted for the end of the run), or under CI=true one failing test saying the same.
 */
export function standInForMissing(requirement: Requirement): void {
  const line = missingLine(requirement);
  if (isCi()) {
    it(`needs ${requirement.what}`, () => failForCi(requirement));
    return;
  }
  noteMissing(requirement);
  it.skip(line, () => {});
}

function failForCi(requirement: Requirement): never {
  throw new Error(
    `${missingLine(requirement).replace(/^skipped: /, "")} — CI runs every suite, so this is a failure`,
  );
}

/** Keep the line for the end of the run (test/global-setup.ts prints each once). */
function noteMissing(requirement: Requirement): void {
  const notes = process.env.CAESAR_TEST_NOTES;
  if (notes) appendFileSync(notes, `${missingLine(requirement)}\n`);
}

/**
 * A suite that needs `requirement`: `define` gets the path found, or the suite is one stand-in test
 * (standInForMissing).
 */
export function describeWith(title: string, requirement: Requirement, define: (path: string) => void): void {
  const path = requirement.find();
  describe(title, () => {
    if (path === undefined) standInForMissing(requirement);
    else define(path);
  });
}

/** One test that needs `requirement`: run with the path found, or a stand-in (skipped, or failing under CI). */
export function itWith(
  requirement: Requirement,
  title: string,
  test: (path: string) => Promise<void> | void,
  timeoutMs?: number,
): void {
  const path = requirement.find();
  if (path !== undefined) {
    it(title, () => test(path), timeoutMs);
    return;
  }
  if (isCi()) {
    it(title, () => failForCi(requirement));
    return;
  }
  noteMissing(requirement);
  it.skip(`${title} (${missingLine(requirement)})`, () => {});
}
