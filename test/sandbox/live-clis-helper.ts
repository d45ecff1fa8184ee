import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { afterEach, describe } from "vitest";
import { mockSetupFor, writeSetupFiles } from "../../src/mock-model/agent-env.js";
import { parseScenario } from "../../src/mock-model/scenario.js";
import { startMockModel } from "../../src/mock-model/server.js";
import { probeBwrap } from "../../src/sandbox/bwrap.js";
import { agentStateFor } from "../helpers/agent-state.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { AGENT_BIN_DIR, isolatedHome } from "../helpers/live-agent.js";
import { makeRepo, taskDir, tempDir, writeFiles } from "../helpers/repo.js";
import { locate, pinnedAgentCli, type Requirement, standInForMissing } from "../helpers/system-deps.js";

/** The pinned CLI and a bubblewrap that can sandbox here: both, or the suite stands in with one line. */
export function sandboxedCli(cli: string): Requirement {
  const pinned = pinnedAgentCli(cli);
  return {
    what: `${pinned.what} and bubblewrap able to create a sandbox`,
    install: `${pinned.install}; apt-get install bubblewrap (and allow unprivileged user namespaces)`,
    fullTierOnly: true,
    find: () => (probeBwrap().available ? pinned.find() : undefined),
  };
}

export interface SandboxedRun {
  root: string;
  taskId: string;
  dir: string;
  outcome: string;
  /** raw.log and events.jsonl, for what the agent's commands printed. */
  output: string;
  worktree: string;
  /** Requests the mock model received. */
  requests: number;
  /** What the model was sent (tool results included: what a CLI's stream leaves out). */
  sent: string;
  /** The key each request to the model carried (`mock`: the one the CLI was given; see RequestLogEntry). */
  keys: string[];
}

/**
 * `caesar run --agent <cli>` under `[sandbox] mode = "required"` in a fresh repository, the CLI pointed at a
 * fresh `caesar mock-model` scripted to run `command` with its shell tool, then report.
 */
export async function runSandboxedCli(
  cli: string,
  command: string,
  args: string[],
  mockHost?: string,
  extraEnv: Record<string, string> = {},
  homeFiles: Record<string, string> = {},
): Promise<SandboxedRun> {
  const root = makeRepo({
    "README.md": "# sandboxed\n",
    ".caesar/config.toml": '[sandbox]\nmode = "required"\n',
  });
  const state = tempDir(`caesar-sbx-${cli}-`);
  const home = join(state, "home");
  mkdirSync(home, { recursive: true });
  writeFiles(home, homeFiles);
  const steps = [{ shell: command }, { report: { status: "success", summary: "probed" } }];
  const scenario = parseScenario(JSON.stringify({ name: "probe", steps }));
  let requests = 0;
  const bodies: unknown[] = [];
  const keys: string[] = [];
  const server = await startMockModel({
    ...(mockHost ? { host: mockHost } : {}),
    scenario,
    logBodies: true,
    onRequest: (entry) => {
      requests++;
      bodies.push(entry.body);
      keys.push(entry.key);
    },
  });
  try {
    const setup = mockSetupFor(cli, server.url, agentStateFor(state));
    await writeSetupFiles(setup);
    const result = await runCaesar(["run", "--json", "--agent", cli, ...args, "probe"], {
      cwd: root,
      timeoutMs: 300_000,
      env: {
        PATH: `${AGENT_BIN_DIR}:${process.env.PATH ?? "/usr/bin:/bin"}`,
        ...isolatedHome(home),
        ...setup.env,
        ...extraEnv,
      },
    });
    const out = parseJsonOutput<{ task_id: string; state: { outcome: string; worktree?: string } }>(result);
    const dir = taskDir(root, out.task_id);
    const read = (name: string) => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), "utf8") : "");
    return {
      root,
      taskId: out.task_id,
      dir,
      outcome: out.state.outcome,
      output: `${read("raw.log")}\n${read("events.jsonl")}`,
      worktree: String(out.state.worktree ?? ""),
      requests,
      sent: JSON.stringify(bodies),
      keys,
    };
  } finally {
    await server.close();
  }
}

/** What the CLI wrote in its per-task home, besides what caesar seeded (names, recursively, up to 2 levels). */
export function writtenByCli(home: string): string[] {
  const seeded = new Set([".caesar-sandbox-home", "config.toml", "settings.json"]);
  const names: string[] = [];
  const walk = (dir: string, prefix: string, depth: number) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (seeded.has(entry.name)) continue;
      if (entry.isDirectory() && depth < 2) walk(join(dir, entry.name), `${prefix}${entry.name}/`, depth + 1);
      else if (!entry.isSymbolicLink()) names.push(`${prefix}${entry.name}`);
    }
  };
  if (existsSync(home)) walk(home, "", 0);
  return names;
}

/** An address of this machine outside its loopback (reached through a proxy, as a provider is), if any. */
export function outsideAddress(): string | undefined {
  for (const entries of Object.values(networkInterfaces()))
    for (const entry of entries ?? []) if (entry.family === "IPv4" && !entry.internal) return entry.address;
  return undefined;
}

/** A TCP listener on the host's loopback that counts connections (what an agent with no network misses). */
export async function loopbackListener(): Promise<{
  port: number;
  connections: () => number;
  close: () => Promise<void>;
}> {
  let count = 0;
  const server: Server = createServer((socket) => {
    count++;
    socket.end("hello\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    port,
    connections: () => count,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A bash line that says NET-OPEN or NET-CLOSED for a TCP connection to the host's loopback. */
export const tryConnect = (port: number) =>
  `(exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo NET-OPEN || echo NET-CLOSED`;

/**
 * A live suite of `agent` under caesar's sandbox: where its program `bin` or bubblewrap is missing, one line
 * stands in for it; each test hands `cleanup` the repositories it made, removed after it
 * (CAESAR_KEEP_LIVE=1 keeps them).
 */
export function describeSandboxed(
  agent: string,
  bin: string,
  body: (cleanup: (root: string) => void) => void,
): void {
  describe(`${agent} under caesar's sandbox (live)`, () => {
    if (!locate(sandboxedCli(bin))) {
      standInForMissing(sandboxedCli(bin));
      return;
    }
    const made: string[] = [];
    afterEach(() => {
      if (process.env.CAESAR_KEEP_LIVE === "1") return;
      for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
    });
    body((root) => made.push(root));
  });
}
