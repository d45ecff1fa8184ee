import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { mockSetupFor, writeSetupFiles } from "../../src/mock-model/agent-env.js";
import { loadScenario } from "../../src/mock-model/scenario.js";
import { startMockModel } from "../../src/mock-model/server.js";
import type { CaesarEvent, EventBody } from "../../src/protocol/event.js";
import { agentStateFor } from "./agent-state.js";
import { type CliResult, parseJsonOutput, runCaesar } from "./cli.js";
import { AGENT_BIN_DIR, isolatedHome } from "./live-agent.js";
import { makeRepo, tempDir } from "./repo.js";

const roots: string[] = [];

/** The repositories and state directories `runCaesarLive` made since the last call (to remove them). */
export function createdByCaesarRun(): string[] {
  return roots.splice(0);
}

export interface CaesarRunLive {
  result: CliResult;
  root: string;
  output: { task_id: string; state: Record<string, unknown> & { report?: Record<string, unknown> } };
  events: EventBody[];
  worktree: string;
}

export interface CaesarRunLiveOptions {
  /** Built-in scenario (default `hello`). */
  scenario?: string;
  /** More options for `caesar run`, before the objective. */
  args?: string[];
  objective?: string;
  /** Files of the repository's first commit. */
  files?: Record<string, string>;
}

/**
 * The environment a live CLI runs in: the pinned CLIs first on PATH, and a fresh home (made here) so
 * no configuration or login of this machine's user reaches it.
 */
export function liveCliEnv(home: string): Record<string, string> {
  mkdirSync(home, { recursive: true });
  return { PATH: `${AGENT_BIN_DIR}:${process.env.PATH ?? "/usr/bin:/bin"}`, ...isolatedHome(home) };
}

/**
 * `caesar run --agent <cli> "create hello.txt containing OK"` through the real binary, in a fresh
 * repository, with the CLI pointed at a fresh `caesar mock-model` the way `--print-env` does it.
 */
export async function runCaesarLive(
  cli: string,
  timeoutMs: number,
  options: CaesarRunLiveOptions = {},
): Promise<CaesarRunLive> {
  const root = makeRepo(options.files);
  const state = tempDir(`caesar-e2e-${cli}-`);
  roots.push(root, state);
  const home = join(state, "home");
  const server = await startMockModel({ scenario: await loadScenario(options.scenario ?? "hello") });
  try {
    const setup = mockSetupFor(cli, server.url, agentStateFor(state));
    await writeSetupFiles(setup);
    const objective = options.objective ?? "create hello.txt containing OK";
    const result = await runCaesar(["run", "--agent", cli, ...(options.args ?? []), objective, "--json"], {
      cwd: root,
      timeoutMs,
      env: { ...liveCliEnv(home), ...setup.env },
    });
    const output = parseJsonOutput<CaesarRunLive["output"]>(result);
    const eventsPath = join(root, ".caesar", "tasks", output.task_id, "events.jsonl");
    const events = readFileSync(eventsPath, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as CaesarEvent);
    return { result, root, output, events, worktree: String(output.state.worktree ?? "") };
  } finally {
    await server.close();
  }
}
