import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { parse } from "smol-toml";
import { urlHosts } from "../support/host-rules.js";

/**
 * The hosts each agent CLI needs to reach its model — its provider's API and sign-in — and the variables
 * that point it at another server (a gateway, a local model). Under caesar's OS sandbox these are what the
 * agent reaches through caesar's egress proxy even when its task has no network (docs/threat-model.md).
 * Keyed by product, so a CLI's ACP mode has the CLI's hosts.
 */
const PROVIDERS: Record<string, { hosts: string[]; urlVariables: string[] }> = {
  claude: {
    hosts: ["api.anthropic.com", "console.anthropic.com", "claude.ai", "statsig.anthropic.com"],
    urlVariables: ["ANTHROPIC_BASE_URL", "ANTHROPIC_BEDROCK_BASE_URL", "ANTHROPIC_VERTEX_BASE_URL"],
  },
  codex: {
    hosts: ["api.openai.com", "chatgpt.com", "auth.openai.com"],
    urlVariables: ["OPENAI_BASE_URL"],
  },
  gemini: {
    hosts: [
      "generativelanguage.googleapis.com",
      "cloudcode-pa.googleapis.com",
      "oauth2.googleapis.com",
      "aiplatform.googleapis.com",
    ],
    urlVariables: ["GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL"],
  },
  opencode: {
    // opencode talks to whichever provider it is configured for: the common ones, and its own.
    hosts: [
      "opencode.ai",
      "models.dev",
      "api.anthropic.com",
      "api.openai.com",
      "openrouter.ai",
      "generativelanguage.googleapis.com",
    ],
    urlVariables: ["OPENCODE_CONFIG_CONTENT"],
  },
  copilot: {
    hosts: ["api.githubcopilot.com", "*.githubcopilot.com", "api.github.com", "github.com"],
    urlVariables: ["COPILOT_PROVIDER_BASE_URL"],
  },
};

PROVIDERS.antigravity = PROVIDERS.gemini!;

/** The hosts an agent needs for its model, from what it is (its product) and its environment. */
export function modelHosts(product: string, env: NodeJS.ProcessEnv): string[] {
  const provider = PROVIDERS[product];
  if (!provider) return [];
  const named = provider.urlVariables.flatMap((name) => urlHosts(env[name] ?? ""));
  const configured = product === "codex" ? codexProviders(env).flatMap((entry) => entry.hosts) : [];
  return [...new Set([...provider.hosts, ...regionalHosts(product, env), ...named, ...configured])];
}

/** A cloud provider's regional endpoint, where the environment names the region (Bedrock, Vertex AI). */
function regionalHosts(product: string, env: NodeJS.ProcessEnv): string[] {
  const hosts: string[] = [];
  if (product === "claude") {
    const region = env.AWS_REGION || env.AWS_DEFAULT_REGION;
    if (env.CLAUDE_CODE_USE_BEDROCK && region) hosts.push(`bedrock-runtime.${region}.amazonaws.com`);
    if (env.CLOUD_ML_REGION) hosts.push(`${env.CLOUD_ML_REGION}-aiplatform.googleapis.com`);
  }
  if ((product === "gemini" || product === "antigravity") && env.GOOGLE_CLOUD_LOCATION)
    hosts.push(`${env.GOOGLE_CLOUD_LOCATION}-aiplatform.googleapis.com`);
  return hosts;
}

/**
 * The variables holding the keys of the providers the agent's own configuration names (codex's
 * `model_providers.*.env_key`): its own, though another provider's prefix names them.
 */
export function ownKeyVariables(product: string, env: NodeJS.ProcessEnv): string[] {
  return product === "codex" ? codexProviders(env).flatMap((entry) => entry.keys) : [];
}

/** codex's model providers in its configuration (`$CODEX_HOME/config.toml`): their hosts and key variables. */
function codexProviders(env: NodeJS.ProcessEnv): { hosts: string[]; keys: string[] }[] {
  const home = env.CODEX_HOME || join(env.HOME || homedir(), ".codex");
  let config: Record<string, unknown>;
  try {
    config = parse(readFileSync(join(home, "config.toml"), "utf8")) as Record<string, unknown>;
  } catch {
    return [];
  }
  const providers = config.model_providers;
  if (!providers || typeof providers !== "object") return [];
  return Object.values(providers as Record<string, unknown>).map((provider) => {
    const { base_url: url, env_key: key } = (provider ?? {}) as { base_url?: unknown; env_key?: unknown };
    return {
      hosts: typeof url === "string" ? urlHosts(url) : [],
      keys: typeof key === "string" ? [key] : [],
    };
  });
}

/** The five CLIs whose sign-in files caesar knows. */
const CLIS = ["claude", "codex", "gemini", "opencode", "copilot"];

/** The files in which a CLI keeps its sign-in, where its environment (and the account's home) says. */
function credentialFiles(product: string, env: NodeJS.ProcessEnv, home: string): string[] {
  switch (product) {
    case "claude":
      return [
        join(env.CLAUDE_CONFIG_DIR || join(home, ".claude"), ".credentials.json"),
        join(home, ".claude.json"),
      ];
    case "codex":
      return [join(env.CODEX_HOME || join(home, ".codex"), "auth.json")];
    case "gemini": {
      const dir = join(env.GEMINI_CLI_HOME || home, ".gemini");
      return ["oauth_creds.json", "google_accounts.json", "mcp-oauth-tokens.json"].map((name) =>
        join(dir, name),
      );
    }
    case "opencode":
      return [join(env.XDG_DATA_HOME || join(home, ".local", "share"), "opencode", "auth.json")];
    case "copilot":
      return [join(env.COPILOT_HOME || join(home, ".copilot"), "config.json")];
    default:
      return [];
  }
}

/**
 * The other CLIs' sign-in files, which a sandboxed agent of one of the five does not see (its own are
 * linked into its home of the task's). A custom program may use any CLI's: it sees them all.
 */
export function otherCredentialFiles(product: string, env: NodeJS.ProcessEnv, homes: string[]): string[] {
  if (!CLIS.includes(product)) return [];
  const others = CLIS.filter((cli) => cli !== product);
  return [...new Set(homes.flatMap((home) => others.flatMap((cli) => credentialFiles(cli, env, home))))];
}
