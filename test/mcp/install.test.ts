import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { CAESAR_BIN, parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { tempDir } from "../helpers/repo.js";
import { AGENT_CLI_BIN_DIR, itWith, pinnedAgentCli } from "../helpers/system-deps.js";

/**
 * `caesar mcp install <client>` against the real, pinned client binaries (test/agent-clis, installed by
 * the test run when missing): each client's configuration is pre-filled with a server and comments
 * of the user's, the install must keep them, and the client's own `mcp list` must show both servers.
 * HOME and the XDG directories are private to each case.
 */
const AGENT_BIN = AGENT_CLI_BIN_DIR;

interface Case {
  client: string;
  /** The user's configuration before the install: path (relative to HOME) and content. */
  file: string;
  before: string;
  /** Text of the user's that must still be in the file afterwards. */
  kept: string[];
  /** Clients whose `mcp list` health-checks each server: proof the registered command really serves MCP. */
  connected?: RegExp;
}

const CASES: Case[] = [
  {
    client: "claude",
    file: ".claude.json",
    before: JSON.stringify(
      {
        numStartups: 3,
        mcpServers: { other: { type: "stdio", command: "other-server", args: ["--x"], env: {} } },
      },
      null,
      2,
    ),
    kept: ['"numStartups": 3', '"other-server"'],
    connected: /caesar: .*caesar\.js mcp serve - ✔ Connected/,
  },
  {
    client: "codex",
    file: ".codex/config.toml",
    before:
      '# my codex settings\nmodel = "gpt-5" # favourite\n\n[mcp_servers.other]\n# keep me\ncommand = "other-server"\nargs = ["--x"]\n',
    kept: [
      "# my codex settings",
      "# favourite",
      "# keep me",
      '[mcp_servers.other]\n# keep me\ncommand = "other-server"',
    ],
  },
  {
    client: "copilot",
    file: ".copilot/mcp-config.json",
    before:
      '{\n  "mcpServers": {\n    "other": { "type": "local", "command": "other-server", "args": ["--x"], "tools": ["*"], "x-note": "mine" }\n  }\n}\n',
    kept: ['"x-note": "mine"', '"other-server"'],
  },
  {
    client: "gemini",
    file: ".gemini/settings.json",
    before:
      '{\n  // my gemini settings\n  "mcpServers": {\n    "other": { "command": "other-server", "args": ["--x"] } // keep me\n  }\n}\n',
    kept: ["// my gemini settings", "// keep me", '"other-server"'],
  },
  {
    client: "opencode",
    file: ".config/opencode/opencode.jsonc",
    before:
      '{\n  // my opencode settings\n  "$schema": "https://opencode.ai/config.json",\n  "mcp": {\n    "other": { "type": "local", "command": ["other-server", "--x"] }\n  }\n}\n',
    kept: ["// my opencode settings", '"other-server"'],
    connected: /✓ caesar .*connected/,
  },
];

function isolatedEnv(home: string): Record<string, string> {
  const env: Record<string, string> = {
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    XDG_CACHE_HOME: join(home, ".cache"),
    PATH: `${AGENT_BIN}:${process.env.PATH}`,
    CODEX_HOME: "",
    CLAUDE_CONFIG_DIR: "",
    COPILOT_HOME: "",
    GEMINI_CLI_HOME: "",
    NO_COLOR: "1",
    CI: "1",
  };
  return env;
}

/** The client's own `mcp list`, stdout and stderr together (gemini prints its list on stderr). */
function clientList(client: string, env: Record<string, string>, cwd: string): string {
  const full = { ...process.env, ...env };
  for (const [key, value] of Object.entries(full)) if (value === "") delete full[key];
  const run = spawnSync(join(AGENT_BIN, client), ["mcp", "list"], {
    env: full,
    cwd,
    encoding: "utf8",
    timeout: 120_000,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return `${run.stdout ?? ""}${run.stderr ?? ""}`;
}

describe("caesar mcp install, verified with each real client", () => {
  for (const testCase of CASES) {
    itWith(
      pinnedAgentCli(testCase.client),
      `${testCase.client}: registers caesar mcp serve, keeps what was there, and is idempotent`,
      async () => {
        const home = tempDir("caesar-home-");
        const env = isolatedEnv(home);
        const path = join(home, testCase.file);
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, testCase.before);

        const dry = await runCaesar(["mcp", "install", testCase.client, "--dry-run", "--json"], {
          cwd: home,
          env,
        });
        expect(dry.code, dry.stderr).toBe(0);
        expect(parseJsonOutput<{ status: string }>(dry).status).toBe("dry-run");
        expect(readFileSync(path, "utf8")).toBe(testCase.before);

        const result = await runCaesar(["mcp", "install", testCase.client, "--json"], {
          cwd: home,
          env,
          timeoutMs: 150_000,
        });
        expect(result.code, result.stdout + result.stderr).toBe(0);
        const outcome = parseJsonOutput<{
          status: string;
          file: string;
          server: { command: string; args: string[] };
        }>(result);
        expect(outcome.status).toBe("installed");
        expect(outcome.file).toBe(path);
        expect(outcome.server).toEqual({ command: process.execPath, args: [CAESAR_BIN, "mcp", "serve"] });

        const after = readFileSync(path, "utf8");
        for (const kept of testCase.kept) expect(after).toContain(kept);
        expect(after).toContain(CAESAR_BIN);

        const listed = clientList(testCase.client, env, home);
        expect(listed).toContain("caesar");
        expect(listed).toContain("other");
        if (testCase.connected) expect(listed.replace(/\u001b\[[0-9;]*m/g, "")).toMatch(testCase.connected);

        const again = await runCaesar(["mcp", "install", testCase.client, "--json"], {
          cwd: home,
          env,
          timeoutMs: 150_000,
        });
        expect(again.code).toBe(0);
        expect(parseJsonOutput<{ status: string }>(again).status).toBe("already-installed");
        expect(readFileSync(path, "utf8")).toBe(after);
      },
    );
  }

  it("never overwrites a different server of the same name", async () => {
    const home = tempDir("caesar-home-");
    const env = isolatedEnv(home);
    const path = join(home, ".copilot", "mcp-config.json");
    mkdirSync(dirname(path), { recursive: true });
    const before =
      '{ "mcpServers": { "caesar": { "type": "local", "command": "something-else", "args": [] } } }\n';
    writeFileSync(path, before);
    const result = await runCaesar(["mcp", "install", "copilot", "--json"], { cwd: home, env });
    expect(result.code).toBe(1);
    const body = parseJsonOutput<{ error: { code: string; detail: string } }>(result);
    expect(body.error.code).toBe("mcp_server_exists");
    expect(body.error.detail).toContain("--name");
    expect(readFileSync(path, "utf8")).toBe(before);
    const renamed = await runCaesar(["mcp", "install", "copilot", "--name", "caesar-2", "--json"], {
      cwd: home,
      env,
    });
    expect(renamed.code, renamed.stdout).toBe(0);
    expect(readFileSync(path, "utf8")).toContain('"something-else"');
    expect(readFileSync(path, "utf8")).toContain('"caesar-2"');
  });

  it("refuses an unknown client and a configuration file it cannot parse, changing nothing", async () => {
    const home = tempDir("caesar-home-");
    const env = isolatedEnv(home);
    const unknown = await runCaesar(["mcp", "install", "vim", "--json"], { cwd: home, env });
    expect(unknown.code).toBe(2);
    expect(parseJsonOutput<{ error: { code: string } }>(unknown).error.code).toBe("unknown_client");
    const path = join(home, ".codex", "config.toml");
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, "this is = = not toml\n");
    const broken = await runCaesar(["mcp", "install", "codex", "--json"], { cwd: home, env });
    expect(broken.code).toBe(1);
    expect(parseJsonOutput<{ error: { code: string } }>(broken).error.code).toBe("client_config_unreadable");
    expect(readFileSync(path, "utf8")).toBe("this is = = not toml\n");
  });
});
