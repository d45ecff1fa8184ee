import type { AgentAdapter } from "./adapter.js";

/**
 * The catalogue of built-in adapters for real agent CLIs (codex, claude, opencode, gemini, copilot,
 * antigravity). Filled by the adapters work; custom `[[agent]]` entries and the bundled reference agent
 * are added by the registry.
 */
export const BUILTIN_ADAPTERS: AgentAdapter[] = [];
