import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { judge, scenariosFor } from "./evaluate.js";
import { makeKitRepository, removeKitRepository } from "./kit-repo.js";
import type { Level } from "./requirements.js";
import { type Evidence, runScenario } from "./run-scenario.js";
import { planScenarios } from "./scenarios.js";
import { makeScorecard, type Scorecard } from "./scorecard.js";
import type { Subject } from "./subject.js";

export interface KitOptions {
  level: Level;
  /** Each scenario's deadline, with a unit (the deadline scenario has its own). */
  timeout: string;
  /** Keep the throwaway repository (its tasks, worktrees and files) to look into. */
  keep: boolean;
  /** Told when a scenario starts and ends (progress, on stderr). */
  progress?: (line: string) => void;
}

/** How long the kit's conductor service waits idle before it exits, unless the person set it. */
const SERVICE_IDLE = "20s";

/**
 * Run the scenarios a level needs against the agent, one after the other, each a task of one throwaway
 * repository, and judge them into a scorecard.
 */
export async function runConformance(subject: Subject, options: KitOptions): Promise<Scorecard> {
  process.env.CAESAR_SERVICE_IDLE ??= SERVICE_IDLE;
  const plans = planScenarios(subject, { timeout: options.timeout }, nonce, scenariosFor(options.level));
  const stateDir = await makeStateDir();
  let repo: string;
  try {
    repo = makeKitRepository(subject);
  } catch (error) {
    await rm(stateDir, { recursive: true, force: true });
    throw error;
  }
  const evidence: Evidence[] = [];
  // Ctrl-C cancels the scenario running, and the kit cleans up as after its last one.
  const interrupt = new AbortController();
  const onInterrupt = () => interrupt.abort();
  process.once("SIGINT", onInterrupt);
  try {
    for (const plan of plans) {
      options.progress?.(`scenario ${plan.name}: ${plan.request.objective}`);
      const run = await runScenario({ repo, stateDir, signal: interrupt.signal }, subject, plan);
      options.progress?.(
        `  ${run.taskId}: ${run.state.outcome ?? "?"}, report ${run.state.report?.report_source ?? "none"} ${run.state.report?.status ?? ""}`,
      );
      evidence.push(run);
    }
  } finally {
    process.off("SIGINT", onInterrupt);
    if (!options.keep) {
      await rm(stateDir, { recursive: true, force: true });
      await removeKitRepository(repo);
    }
  }
  return makeScorecard({
    agent: subject.name,
    kind: subject.kind,
    level: options.level,
    results: judge(evidence, options.level, subject),
    evidence,
    repo: options.keep ? repo : null,
  });
}

/**
 * Where the CLIs' homes and the model's logs go: under the user's cache, never the temp directory —
 * codex 0.171 refuses to create its helper binaries under a temporary directory, and then every command
 * it runs in its sandbox fails (test/helpers/agent-state.ts says the same for the live suites).
 */
async function makeStateDir(): Promise<string> {
  const cache = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
  await mkdir(join(cache, "caesar"), { recursive: true });
  return mkdtemp(join(cache, "caesar", "conformance-"));
}

/** A token no agent can guess: `c` and ten hex digits. */
function nonce(): string {
  return `c${randomBytes(5).toString("hex")}`;
}
