import { spawnSync } from "node:child_process";
import { accessSync, appendFileSync, constants, existsSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it } from "vitest";

/**
 * What some suites need beyond Node, git and npm — a program of the system (Chromium, tmux, jq,
 * nats-server), or the pinned agent CLIs npm installs — found where it usually lives. A suite that cannot
 * find it gets one skipped test whose title says what to install, and the same line is printed once at the
 * end of the run (test/global-setup.ts). Under CI=true the suite fails instead: CI proves every suite.
 *
 * Some requirements belong to the full tier only (`fullTierOnly`): `npm test` (CAESAR_TEST_TIER=fast)
 * leaves their suites out whether or not they are installed, and says so in one line at the end;
 * `npm run test:all` (CAESAR_TEST_TIER=all, what CI runs) runs them.
 */
export interface Requirement {
  /** What the suite needs, for the skip line: "a Chromium", "tmux". */
  what: string;
  /** How to get it, for the skip line. */
  install: string;
  /** The path of a working one, or undefined. Cached: each suite file asks once. */
  find(): string | undefined;
  /** Its suites are slow or need a large install: `npm test` leaves them to `npm run test:all`. */
  fullTierOnly?: boolean;
}

/**
 * Which tests this run is for: `fast` (`npm test`: the suites that need nothing but Node and git, plus
 * small programs a suite skips without) or `all` (`npm run test:all`, CI). Unset, as in a developer's
 * `npx vitest run <files>`, it is `all`: the files asked for run with whatever is installed.
 */
export type TestTier = "fast" | "all";

export function testTier(env: NodeJS.ProcessEnv = process.env): TestTier {
  const tier = env.CAESAR_TEST_TIER;
  if (tier === undefined || tier === "" || tier === "all") return "all";
  if (tier === "fast") return "fast";
  throw new Error(`CAESAR_TEST_TIER=${tier}: expected fast (npm test) or all (npm run test:all)`);
}

/** Does this run's tier leave `requirement`'s suites out? */
export function leftOutByTier(requirement: Requirement, env: NodeJS.ProcessEnv = process.env): boolean {
  return requirement.fullTierOnly === true && testTier(env) === "fast";
}

/** Where `requirement` is, for this run: undefined when it is missing or the tier leaves it out. */
export function locate(requirement: Requirement): string | undefined {
  return leftOutByTier(requirement) ? undefined : requirement.find();
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
  fullTierOnly: true,
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
  fullTierOnly: true,
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

/** python3, for a test that needs a process to fork without reaping (Node reaps its children itself). */
export const PYTHON3: Requirement = {
  what: "python3",
  install: "apt-get install python3",
  find: cached(() =>
    findExecutable(["python3", "/usr/bin/python3", "/usr/local/bin/python3"], ["--version"], /^Python 3/),
  ),
};

/** nats-server, for the cluster suites (Debian installs it in /usr/sbin, often not on a user's PATH). */
export const NATS_SERVER: Requirement = {
  what: "nats-server",
  install: "apt-get install nats-server",
  fullTierOnly: true,
  find: cached(() =>
    findExecutable(
      ["nats-server", "/usr/sbin/nats-server", "/usr/local/bin/nats-server", "/usr/bin/nats-server"],
      ["--version"],
      /^nats-server: v/,
    ),
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
    fullTierOnly: true,
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

/** The title of the test that stands for a suite the tier leaves out. */
export function leftOutLine(requirement: Requirement): string {
  return `left out by npm test: needs ${requirement.what}; npm run test:all runs it`;
}

/** The one line `npm test` ends with when it left suites out: what they need, and how to run them. */
export function leftOutSummary(whats: readonly string[]): string {
  // A suite may need what another needs and more ("the pinned agent CLIs … and bubblewrap …"): named once.
  const needs = [
    ...new Set(
      whats.map((what) => {
        const also = whats.find((other) => other !== what && what.startsWith(`${other} and `));
        return also ? what.slice(`${also} and `.length) : what;
      }),
    ),
  ];
  const list = needs.length > 1 ? `${needs.slice(0, -1).join(", ")} and ${needs.at(-1)}` : (needs[0] ?? "");
  return `npm test left out the suites that need ${list}; npm run test:all runs them (the README says what it installs)`;
}

/**
 * For a suite whose requirement is missing or left out by the tier, inside its describe: one skipped test
 * saying why (noted for the end of the run), or under CI=true, for a missing one, one failing test saying
 * the same.
 */
export function standInForMissing(requirement: Requirement): void {
  if (leftOutByTier(requirement)) {
    noteLeftOut(requirement);
    it.skip(leftOutLine(requirement), () => {});
    return;
  }
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

/** Keep what a left-out suite needed, for the one line the run ends with (test/global-setup.ts). */
function noteLeftOut(requirement: Requirement): void {
  const notes = process.env.CAESAR_TEST_NOTES;
  if (notes) appendFileSync(notes, `${LEFT_OUT_PREFIX}${requirement.what}\n`);
}

/** How a left-out requirement is marked in the notes file. */
export const LEFT_OUT_PREFIX = "left-out: ";

/**
 * A suite that needs `requirement`: `define` gets the path found, or the suite is one stand-in test
 * (standInForMissing).
 */
export function describeWith(title: string, requirement: Requirement, define: (path: string) => void): void {
  const path = locate(requirement);
  describe(title, () => {
    if (path === undefined) standInForMissing(requirement);
    else define(path);
  });
}

/**
 * One test that needs `requirement`: run with the path found, or a stand-in (skipped, or failing under CI
 * when the requirement is missing).
 */
export function itWith(
  requirement: Requirement,
  title: string,
  test: (path: string) => Promise<void> | void,
  timeoutMs?: number,
): void {
  if (leftOutByTier(requirement)) {
    noteLeftOut(requirement);
    it.skip(`${title} (${leftOutLine(requirement)})`, () => {});
    return;
  }
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
