import { join } from "node:path";
import type { LaunchContext } from "./adapter.js";

/**
 * Linux caps one argv string at 128 KiB (MAX_ARG_STRLEN). A brief longer than this travels in a file
 * the agent is told to read first; shorter ones go on the command line as they are.
 */
export const PROMPT_ARG_MAX = 96 * 1024;

export interface PromptArg {
  text: string;
  files: { path: string; content: string }[];
}

export function promptArg(launch: LaunchContext): PromptArg {
  if (Buffer.byteLength(launch.prompt) <= PROMPT_ARG_MAX) return { text: launch.prompt, files: [] };
  const path = join(launch.runtimeDir, "brief.md");
  return {
    text: `Your brief is too long for the command line. Read it in full from ${path} before doing anything else, then follow it.`,
    files: [{ path, content: launch.prompt }],
  };
}
