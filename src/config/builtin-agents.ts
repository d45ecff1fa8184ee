/**
 * The ids of the agents caesar ships (the reference agent and the built-in CLI adapters), for checks that
 * run before the adapters are loaded (configuration validation). test/config checks it against the
 * registry, so the two never drift.
 */
export const BUILTIN_AGENT_IDS = [
  "reference",
  "codex",
  "claude",
  "opencode",
  "gemini",
  "copilot",
  "antigravity",
  // The same CLIs driven over the Agent Client Protocol (agents/acp/clis.ts).
  "gemini-acp",
  "opencode-acp",
  "copilot-acp",
  "codex-acp",
  "claude-acp",
] as const;
