import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type {
  ChannelServer,
  LaunchContext,
  LineAgentAdapter,
  StreamOutcome,
  ToolLists,
} from "../../src/agents/adapter.js";
import { writeLaunchFiles } from "../../src/agents/launch-files.js";
import { mockSetupFor, writeSetupFiles } from "../../src/mock-model/agent-env.js";
import { loadScenario, type Scenario } from "../../src/mock-model/scenario.js";
import { type RequestLogEntry, startMockModel } from "../../src/mock-model/server.js";
import type { EventBody } from "../../src/protocol/event.js";
import { LineBuffer } from "../../src/protocol/jsonl.js";
import type { Mode } from "../../src/protocol/task.js";
import { fixturePath, normalizeLine, writeFixture } from "./agent-fixtures.js";
import { agentStateFor } from "./agent-state.js";
import { makeLaunch } from "./launch.js";
import { AGENT_CLI_BIN_DIR, locate, pinnedAgentCli } from "./system-deps.js";

/** The pinned real CLIs (test/agent-clis, installed by the test run); see system-deps.ts without them. */
export const AGENT_BIN_DIR = AGENT_CLI_BIN_DIR;

export function agentBinAvailable(cli: string): boolean {
  return locate(pinnedAgentCli(cli)) !== undefined;
}

/** A home of its own for a CLI: HOME and the XDG directories under it, so nothing of the user's is read. */
export function isolatedHome(home: string): Record<string, string> {
  return {
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local/share"),
    XDG_CACHE_HOME: join(home, ".cache"),
    XDG_STATE_HOME: join(home, ".local/state"),
  };
}

/** Every root a live run created in this process (the suites remove them after each test). */
export const created: string[] = [];

export interface LiveRunOptions {
  adapter: LineAgentAdapter;
  /** Built-in scenario name or a scenario object. */
  scenario: string | Scenario;
  /** Fixture name; recorded under test/fixtures/agents/<cli>/<version>/<case>.jsonl. */
  caseName: string;
  mode?: Mode;
  network?: boolean;
  /** Tool restrictions for the run (default: none). */
  tools?: ToolLists;
  /** Build the channel from the run's paths (the probe server gets the task dir in its args). */
  channel?: (paths: { root: string; taskDir: string }) => ChannelServer;
  timeoutMs?: number;
  /** The brief (default: "Create hello.txt containing OK"); a function gets the run's paths. */
  prompt?: string | ((paths: { root: string; taskDir: string }) => string);
  /** Record the fixture when missing (default), or never. */
  record?: boolean;
  /**
   * Continue an earlier run: the same repository, task directory, home and CLI state, and its session
   * (`LaunchContext.resume`, from the earlier run's stream).
   */
  continueFrom?: LiveRun;
}

export interface LiveRun {
  root: string;
  workspace: string;
  taskDir: string;
  launch: LaunchContext;
  events: EventBody[];
  outcome: StreamOutcome;
  exit: { code: number | null; signal: NodeJS.Signals | null };
  stdout: string[];
  stderr: string[];
  requests: RequestLogEntry[];
  /** Where the fixture was written, when this run recorded one. */
  recorded?: string;
}

function git(cwd: string, ...args: string[]): void {
  execFileSync("git", args, { cwd, stdio: "ignore" });
}

/** A real git repository with one commit, the way a worktree looks to an agent. */
function makeRepo(dir: string): void {
  mkdirSync(dir, { recursive: true });
  git(dir, "init", "-q", "-b", "main");
  writeFileSync(join(dir, "README.md"), "# live test\n");
  git(dir, "add", ".");
  git(dir, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "init");
}

/**
 * Run a real agent CLI through its adapter against a fresh mock model, in a fresh repository with a
 * fresh state directory, the way the engine will: build the command, write its files, spawn it in its
 * own process group, translate every line as it comes, then finish.
 */
export async function runLive(options: LiveRunOptions): Promise<LiveRun> {
  const cli = options.adapter.id;
  const earlier = options.continueFrom;
  const root = earlier?.root ?? mkdtempSync(join(tmpdir(), `caesar-live-${cli}-`));
  if (!earlier) created.push(root);
  const workspace = join(root, "work");
  const taskDir = join(root, "task");
  const home = join(root, "home");
  if (!earlier) {
    makeRepo(workspace);
    mkdirSync(taskDir, { recursive: true });
    mkdirSync(home, { recursive: true });
  }

  const scenario =
    typeof options.scenario === "string" ? await loadScenario(options.scenario) : options.scenario;
  const requests: RequestLogEntry[] = [];
  const server = await startMockModel({ scenario, onRequest: (entry) => requests.push(entry) });
  try {
    const setup = mockSetupFor(cli, server.url, agentStateFor(root));
    await writeSetupFiles(setup);
    const env: Record<string, string> = {
      PATH: `${AGENT_BIN_DIR}:${process.env.PATH ?? "/usr/bin:/bin"}`,
      ...isolatedHome(home),
      USER: process.env.USER ?? "root",
      LANG: process.env.LANG ?? "C.UTF-8",
      SHELL: "/bin/bash",
      TERM: "dumb",
      NO_COLOR: "1",
      ...setup.env,
    };
    const launch = makeLaunch({
      agent: cli,
      workspace,
      taskDir,
      mode: options.mode,
      network: options.network,
      ...(options.tools ? { tools: options.tools } : {}),
      channel: options.channel?.({ root, taskDir }),
      prompt: typeof options.prompt === "function" ? options.prompt({ root, taskDir }) : options.prompt,
      env,
      ...(earlier?.outcome.session ? { resume: earlier.outcome.session } : {}),
    });
    const command = options.adapter.buildCommand(launch);
    await writeLaunchFiles(command);
    const translator = options.adapter.createTranslator(launch);
    const events: EventBody[] = [];
    const lines: { stream: "stdout" | "stderr"; line: string }[] = [];
    const exit = await new Promise<LiveRun["exit"]>((resolve, reject) => {
      const child = spawn(command.bin, command.args, {
        cwd: command.cwd,
        env: { ...launch.env, ...command.env },
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      });
      const buffers = { stdout: new LineBuffer(), stderr: new LineBuffer() };
      const feed = (stream: "stdout" | "stderr", text: string[]) => {
        for (const line of text) {
          lines.push({ stream, line });
          const translated =
            stream === "stdout" ? translator.stdout(line) : (translator.stderr?.(line) ?? []);
          events.push(...translated);
        }
      };
      child.stdout
        .setEncoding("utf8")
        .on("data", (chunk: string) => feed("stdout", buffers.stdout.push(chunk)));
      child.stderr
        .setEncoding("utf8")
        .on("data", (chunk: string) => feed("stderr", buffers.stderr.push(chunk)));
      const timer = setTimeout(() => {
        try {
          process.kill(-child.pid!, "SIGKILL");
        } catch {
          // already gone
        }
      }, options.timeoutMs ?? 90_000);
      child.on("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
      child.on("close", (code, signal) => {
        clearTimeout(timer);
        feed("stdout", buffers.stdout.flush());
        feed("stderr", buffers.stderr.flush());
        resolve({ code, signal });
      });
    });
    const outcome = await translator.finish(exit);
    events.push(...(outcome.events ?? []));
    const recorded =
      options.record === false ? undefined : await maybeRecord(options, launch, root, lines, exit);
    const stdout = lines.filter((l) => l.stream === "stdout").map((l) => l.line);
    const stderr = lines.filter((l) => l.stream === "stderr").map((l) => l.line);
    return { root, workspace, taskDir, launch, events, outcome, exit, stdout, stderr, requests, recorded };
  } finally {
    await server.close();
  }
}

/** Files the CLI itself wrote in the run directory (not the ones caesar wrote before launch). */
const CLI_OUTPUTS = ["codex-last-message.txt", "copilot-usage.json"];

async function maybeRecord(
  options: LiveRunOptions,
  launch: LaunchContext,
  root: string,
  lines: { stream: "stdout" | "stderr"; line: string }[],
  exit: LiveRun["exit"],
): Promise<string | undefined> {
  const detection = await options.adapter.detect(launch.env as NodeJS.ProcessEnv);
  // No version read (`--version` can exceed its timeout on a loaded machine): nothing to file it under.
  if (detection.version === undefined) return undefined;
  const path = fixturePath(options.adapter.id, detection.version, options.caseName);
  if (existsSync(path) && process.env.CAESAR_RECORD_FIXTURES !== "1") return undefined;
  // Claude also names its project folder after the path, with every non-alphanumeric made a dash.
  const replacements: [string, string][] = [
    [root, "/tmp/caesar-live"],
    [root.replace(/[^A-Za-z0-9]/g, "-"), "-tmp-caesar-live"],
  ];
  const outputs: Record<string, string> = {};
  if (existsSync(launch.runtimeDir)) {
    for (const name of readdirSync(launch.runtimeDir)) {
      if (CLI_OUTPUTS.includes(name)) {
        outputs[name] = normalizeLine(readFileSync(join(launch.runtimeDir, name), "utf8"), replacements);
      }
    }
  }
  const scenario = typeof options.scenario === "string" ? options.scenario : options.scenario.name;
  return writeFixture({
    header: {
      fixture: "caesar.agent-fixture/v1",
      cli: options.adapter.id,
      version: detection.version,
      case: options.caseName,
      mode: launch.mode,
      scenario,
      channel: launch.channel !== undefined,
      outputs,
    },
    lines: lines.map((entry) => ({ stream: entry.stream, line: normalizeLine(entry.line, replacements) })),
    exit,
  });
}
