import { mkdir, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { UsageError } from "../support/errors.js";

/**
 * What points each agent CLI at the mock model: environment variables, and the files some CLIs need
 * (a codex home with a provider, gemini settings selecting API-key auth). Everything lives under a
 * state directory of its own, so the user's own configuration is never read or changed.
 */
export interface AgentMockSetup {
  env: Record<string, string>;
  files: { path: string; content: string }[];
}

/** The key every CLI sends; the mock accepts any key (scenarios decide failures). */
export const MOCK_API_KEY = "caesar-mock-key";
export const DEFAULT_MOCK_PORT = 18080;

export const MOCK_AGENTS = ["codex", "claude", "opencode", "gemini", "copilot"] as const;
export type MockAgent = (typeof MOCK_AGENTS)[number];

/** Model names each CLI knows (codex warns on slugs missing from its catalogue). */
export const MOCK_MODELS: Record<MockAgent, string> = {
  codex: "gpt-5.5",
  claude: "claude-sonnet-4-5",
  opencode: "caesar-mock/mock-model",
  gemini: "gemini-2.5-flash",
  copilot: "gpt-4.1",
};

/**
 * Where `--print-env` prepares the CLIs' homes by default: a folder per port in the user's cache, not the
 * temporary directory — codex (0.171) with bubblewrap installed refuses to make its helpers under one,
 * and then every command it runs fails.
 */
export function defaultStateDir(port: number, env: NodeJS.ProcessEnv = process.env): string {
  const cache = env.XDG_CACHE_HOME || join(homedir(), ".cache");
  return join(cache, "caesar", "mock-model", String(port));
}

export function mockSetupFor(agent: string, url: string, stateDir: string): AgentMockSetup {
  // A CLI's ACP mode (gemini-acp, codex-acp…) talks to the model exactly like the CLI itself.
  const cli = agent.endsWith("-acp") ? agent.slice(0, -"-acp".length) : agent;
  switch (cli) {
    case "codex":
      return codexSetup(url, join(stateDir, "codex-home"));
    case "claude":
      return {
        env: {
          ANTHROPIC_BASE_URL: url,
          ANTHROPIC_API_KEY: MOCK_API_KEY,
          ANTHROPIC_MODEL: MOCK_MODELS.claude,
          CLAUDE_CONFIG_DIR: join(stateDir, "claude-config"),
          // No telemetry, feature flags or update checks: only the mock is contacted.
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
          DISABLE_TELEMETRY: "1",
          DISABLE_ERROR_REPORTING: "1",
          DISABLE_AUTOUPDATER: "1",
          // Claude retries a refused request 10 times with backoff (over a minute); fail scenarios should not.
          CLAUDE_CODE_MAX_RETRIES: "1",
        },
        files: [],
      };
    case "opencode":
      return {
        env: {
          OPENCODE_CONFIG_CONTENT: JSON.stringify({
            provider: {
              "caesar-mock": {
                npm: "@ai-sdk/openai-compatible",
                name: "caesar mock-model",
                options: { baseURL: `${url}/v1`, apiKey: MOCK_API_KEY },
                // A context window of its own, so that opencode states its usage (ACP usage_update).
                models: {
                  "mock-model": {
                    name: "mock-model",
                    tool_call: true,
                    limit: { context: 128_000, output: 16_384 },
                  },
                },
              },
            },
            model: MOCK_MODELS.opencode,
            small_model: MOCK_MODELS.opencode,
          }),
          OPENCODE_DISABLE_AUTOUPDATE: "1",
          OPENCODE_DISABLE_MODELS_FETCH: "1",
          OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
          OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
          OPENCODE_DISABLE_SHARE: "1",
        },
        files: [],
      };
    case "gemini": {
      const home = join(stateDir, "gemini-home");
      const settings = {
        security: { auth: { selectedType: "gemini-api-key" }, folderTrust: { enabled: false } },
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
        general: { disableAutoUpdate: true, disableUpdateNag: true },
      };
      return {
        env: {
          GEMINI_CLI_HOME: home,
          GOOGLE_GEMINI_BASE_URL: url,
          GEMINI_API_KEY: MOCK_API_KEY,
          GEMINI_MODEL: MOCK_MODELS.gemini,
        },
        files: [
          { path: join(home, ".gemini", "settings.json"), content: `${JSON.stringify(settings, null, 2)}\n` },
        ],
      };
    }
    case "copilot":
      return {
        env: {
          COPILOT_OFFLINE: "true",
          COPILOT_PROVIDER_BASE_URL: `${url}/v1`,
          COPILOT_PROVIDER_TYPE: "openai",
          COPILOT_PROVIDER_API_KEY: MOCK_API_KEY,
          COPILOT_MODEL: MOCK_MODELS.copilot,
          COPILOT_HOME: join(stateDir, "copilot-home"),
          COPILOT_AUTO_UPDATE: "false",
        },
        files: [],
      };
    default:
      throw new UsageError("unknown_mock_agent", `caesar mock-model cannot point ${agent} at itself`, {
        detail: `Supported: ${MOCK_AGENTS.join(", ")} (and their ACP modes, e.g. gemini-acp), or all. Antigravity (agy) documents no way to use a local model server.`,
      });
  }
}

function codexSetup(url: string, home: string): AgentMockSetup {
  // A provider of our own: codex's built-in `openai` provider ignores OPENAI_BASE_URL and first tries a
  // WebSocket; `wire_api = "chat"` is refused since 0.171. No retries: a failure should show at once.
  const config = [
    `model = "${MOCK_MODELS.codex}"`,
    `model_provider = "caesar-mock"`,
    "check_for_update_on_startup = false",
    "",
    "[analytics]",
    "enabled = false",
    "",
    "# Plugin sync runs `git ls-remote https://github.com/openai/plugins.git` in the background.",
    "[features]",
    "plugins = false",
    "apps = false",
    "remote_plugin = false",
    "",
    "[model_providers.caesar-mock]",
    `name = "caesar mock-model"`,
    `base_url = ${JSON.stringify(`${url}/v1`)}`,
    `env_key = "CAESAR_MOCK_API_KEY"`,
    `wire_api = "responses"`,
    "request_max_retries = 0",
    "stream_max_retries = 0",
    "",
  ].join("\n");
  return {
    env: { CODEX_HOME: home, CAESAR_MOCK_API_KEY: MOCK_API_KEY },
    files: [{ path: join(home, "config.toml"), content: config }],
  };
}

/** Every supported agent at once (their variables do not overlap). */
export function mockSetupForAll(url: string, stateDir: string): AgentMockSetup {
  const merged: AgentMockSetup = { env: {}, files: [] };
  for (const agent of MOCK_AGENTS) {
    const setup = mockSetupFor(agent, url, stateDir);
    Object.assign(merged.env, setup.env);
    merged.files.push(...setup.files);
  }
  return merged;
}

export async function writeSetupFiles(setup: AgentMockSetup): Promise<void> {
  for (const file of setup.files) {
    await mkdir(dirname(file.path), { recursive: true });
    await writeFile(file.path, file.content);
  }
  // Homes that must exist before the CLI starts (codex refuses a missing CODEX_HOME).
  for (const key of ["CODEX_HOME", "COPILOT_HOME", "CLAUDE_CONFIG_DIR", "GEMINI_CLI_HOME"]) {
    const dir = setup.env[key];
    if (dir) await mkdir(dir, { recursive: true });
  }
}

/** `export NAME='value'` lines for `eval "$(caesar mock-model --print-env codex)"`. */
export function renderExports(env: Record<string, string>): string {
  return Object.entries(env)
    .map(([name, value]) => `export ${name}='${value.replace(/'/g, "'\\''")}'`)
    .join("\n");
}
