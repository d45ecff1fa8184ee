import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";

export interface ChatMountOptions {
  /** The agent the tools act for (the return channel); absent on `caesar mcp serve`, where callers name themselves. */
  agent?: string;
  /** The chat folder (`<root>/.caesar/chat`), which an agent CLI's MCP environment may not carry. */
  chatRoot?: string;
}

/**
 * MOUNTING POINT for the agent-chat tools (`caesar_chat_*`), built on branch `chat` as
 * `registerChatTools(server, options)` in src/mcp/chat-tools.ts. Both servers call this; it registers
 * nothing until that file is on main. When it lands, replace the body with:
 *
 *   registerChatTools(server, {
 *     ...(options.agent ? { agent: options.agent } : {}),
 *     ...(options.chatRoot ? { context: () => makeChatContext({ root: options.chatRoot }) } : {}),
 *   });
 *
 * (importing registerChatTools from "./chat-tools.js" and makeChatContext from "../chat/index.js").
 */
export function mountChatTools(_server: McpServer, _options: ChatMountOptions = {}): void {}
