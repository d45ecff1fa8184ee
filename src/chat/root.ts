import { homedir } from "node:os";
import { join, resolve } from "node:path";

export interface ChatRootSource {
  /** An explicit root (`--root`), resolved against `cwd`. */
  root?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  home?: string;
}

/** Where a chat root came from, for messages that must say which folder was used and why. */
export type ChatRootOrigin = "option" | "env" | "default";

export interface ResolvedChatRoot {
  dir: string;
  origin: ChatRootOrigin;
}

/** The folder holding the channels: `--root`, then `$AGENT_CHAT_ROOT`, then `~/agent-chat`. */
export function resolveChatRoot(source: ChatRootSource = {}): ResolvedChatRoot {
  const cwd = source.cwd ?? process.cwd();
  if (source.root !== undefined && source.root !== "")
    return { dir: resolve(cwd, source.root), origin: "option" };
  const fromEnv = (source.env ?? process.env).AGENT_CHAT_ROOT;
  if (fromEnv !== undefined && fromEnv !== "") return { dir: resolve(cwd, fromEnv), origin: "env" };
  return { dir: join(source.home ?? homedir(), "agent-chat"), origin: "default" };
}
