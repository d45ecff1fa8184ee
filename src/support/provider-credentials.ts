/**
 * The variables that carry model providers' credentials. Agent CLIs start MCP servers with their own
 * environment: claude and opencode pass their provider keys to every server (OPENCODE_CONFIG_CONTENT even
 * carries the `apiKey`). The return channel needs none of them, so it drops them from its own environment
 * at start; checks (commands run after an agent) run without them too.
 */

/** Prefixes of the variables that configure model providers and their credentials. */
const PROVIDER_PREFIXES = [
  "ANTHROPIC_",
  "CLAUDE_CODE_OAUTH",
  "OPENAI_",
  "AZURE_OPENAI_",
  "CODEX_",
  "GEMINI_",
  "GOOGLE_",
  "VERTEX",
  "CLOUDSDK_",
  "COPILOT_PROVIDER_",
  "COPILOT_GITHUB_TOKEN",
  "GH_TOKEN",
  "GITHUB_TOKEN",
  "OPENROUTER_",
  "OPENCODE_CONFIG_CONTENT",
  "MISTRAL_",
  "GROQ_",
  "DEEPSEEK_",
  "XAI_",
  "TOGETHER_",
  "FIREWORKS_",
  "PERPLEXITY_",
  "COHERE_",
  "HF_TOKEN",
  "HUGGINGFACE_",
  "AWS_ACCESS_KEY_ID",
  "AWS_SECRET_ACCESS_KEY",
  "AWS_SESSION_TOKEN",
  "AWS_BEARER_TOKEN_BEDROCK",
];

/** Any other variable whose name says it holds a secret. */
const SECRET_NAME = /(API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_KEY)/i;

export function isProviderCredential(name: string): boolean {
  const upper = name.toUpperCase();
  return PROVIDER_PREFIXES.some((prefix) => upper.startsWith(prefix)) || SECRET_NAME.test(name);
}

/** Delete provider credentials from `env` (in place); returns the names dropped, never their values. */
export function dropProviderCredentials(env: NodeJS.ProcessEnv = process.env): string[] {
  const dropped = Object.keys(env).filter(isProviderCredential).sort();
  for (const name of dropped) delete env[name];
  return dropped;
}

/** The model providers' own variables (not general-purpose ones such as GH_TOKEN or AWS_*). */
const MODEL_PROVIDER_PREFIXES = PROVIDER_PREFIXES.filter(
  (prefix) => !prefix.startsWith("GH_") && !prefix.startsWith("GITHUB_") && !prefix.startsWith("AWS_"),
);

/** What each agent CLI's own provider reads; an agent not listed (opencode, a custom program) keeps them all. */
const OWN_PREFIXES: Record<string, string[]> = {
  claude: ["ANTHROPIC_", "CLAUDE_CODE_OAUTH"],
  codex: ["OPENAI_", "AZURE_OPENAI_", "CODEX_"],
  gemini: ["GEMINI_", "GOOGLE_", "VERTEX", "CLOUDSDK_"],
  antigravity: ["GEMINI_", "GOOGLE_", "VERTEX", "CLOUDSDK_"],
  copilot: ["COPILOT_PROVIDER_", "COPILOT_GITHUB_TOKEN"],
};

/**
 * The variables of other model providers than the agent's own (`claude` gets no `OPENAI_API_KEY`), which
 * a sandboxed agent does not get. claude on Vertex (`CLAUDE_CODE_USE_VERTEX`) keeps Google's.
 */
export function otherProvidersVariables(product: string, env: Record<string, string | undefined>): string[] {
  const own = OWN_PREFIXES[product];
  if (!own) return [];
  const kept =
    product === "claude" && env.CLAUDE_CODE_USE_VERTEX ? [...own, "GOOGLE_", "VERTEX", "CLOUDSDK_"] : own;
  return Object.keys(env).filter((name) => {
    const upper = name.toUpperCase();
    return (
      MODEL_PROVIDER_PREFIXES.some((prefix) => upper.startsWith(prefix)) &&
      !kept.some((prefix) => upper.startsWith(prefix))
    );
  });
}
