import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { makeChatContext } from "../chat/index.js";
import { explainBadName } from "../chat/names.js";
import { registerChatTools } from "./chat-tools.js";

export interface ChatMountOptions {
  /** The agent the tools act for (the return channel); absent on `caesar mcp serve`, where callers name themselves. */
  agent?: string;
  /** The chat folder: the project's `.caesar/chat`, the one its tasks' agents get as AGENT_CHAT_ROOT. */
  chatRoot: string;
}

/** Mount the agent-chat tools (`caesar_chat_*`, docs/chat.md) on either MCP server. */
export function mountChatTools(server: McpServer, options: ChatMountOptions): void {
  registerChatTools(server, {
    context: () => makeChatContext({ root: options.chatRoot }),
    ...(options.agent === undefined ? {} : { agent: options.agent }),
  });
}

/**
 * The name a task's agent has in chat: `<agent>-<task hex>` (e.g. `codex-7f3a9c21`), unique per task and
 * still saying which agent it is; the task id itself when that is not a valid chat name.
 */
export function chatNameOfTask(agent: string, taskId: string): string {
  const name = `${agent}-${taskId.replace(/^t_/, "")}`.toLowerCase();
  return explainBadName(name, "agent") === undefined ? name : taskId.toLowerCase();
}
