import type { LineAgentAdapter } from "./adapter.js";
import { antigravityAdapter } from "./antigravity.js";
import { claudeAdapter } from "./claude.js";
import { codexAdapter } from "./codex.js";
import { copilotAdapter } from "./copilot.js";
import { geminiAdapter } from "./gemini.js";
import { opencodeAdapter } from "./opencode.js";

/**
 * The catalogue of built-in adapters for real agent CLIs (codex, claude, opencode, gemini, copilot,
 * antigravity). Custom `[[agent]]` entries and the bundled reference agent are added by the registry.
 */
export const BUILTIN_ADAPTERS: LineAgentAdapter[] = [
  codexAdapter,
  claudeAdapter,
  opencodeAdapter,
  geminiAdapter,
  copilotAdapter,
  antigravityAdapter,
];
