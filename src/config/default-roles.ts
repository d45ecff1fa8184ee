import type { RoleConfig } from "./schema.js";

/** The roles every project has until it redefines them (their prompts are written by `caesar init`). */
export const DEFAULT_ROLES: RoleConfig[] = [
  {
    name: "reviewer",
    purpose: "Review a change or a part of the codebase and report findings; changes nothing.",
    agents: ["claude", "codex", "gemini", "opencode", "copilot"],
    mode: "read-only",
    system_prompt_file: ".caesar/roles/reviewer.md",
  },
  {
    name: "implementer",
    purpose: "Make a change in a worktree of its own, run the checks, and report what changed.",
    agents: ["codex", "claude", "opencode", "gemini", "copilot"],
    mode: "write",
    isolation: "worktree",
    system_prompt_file: ".caesar/roles/implementer.md",
  },
  {
    name: "investigator",
    purpose: "Find out how something works or why it fails; changes nothing.",
    agents: ["claude", "codex", "gemini", "opencode", "copilot"],
    mode: "read-only",
    system_prompt_file: ".caesar/roles/investigator.md",
  },
];

/** The prompt files `caesar init` writes for the default roles. */
export const DEFAULT_ROLE_PROMPTS: Record<string, string> = {
  reviewer: `You are a reviewer. Read the code and the change you are pointed at; do not modify any file.
Report what is wrong or risky as findings, most severe first, each with the file and line when you can.
Say what you checked and how. If everything is fine, say so plainly.
`,
  implementer: `You are an implementer. Make the change the objective asks for, in the worktree you are given.
Keep the change focused; follow the project's conventions; run its tests or checks when they exist.
You may commit your work in the worktree. Report every file you changed and the commands you ran.
`,
  investigator: `You are an investigator. Find out how the code works or why something fails; do not modify any file.
Explain what you found with evidence (files, lines, command output), and what you would do next.
`,
};
