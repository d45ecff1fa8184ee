import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { projectPaths } from "../engine/store/project.js";
import { registerAwaitTools } from "./await-tools.js";
import { registerCatalogTools } from "./catalog-tools.js";
import { registerChangeTools } from "./change-tools.js";
import { mountChatTools } from "./chat-mount.js";
import type { OrchestratorContext } from "./context.js";
import { registerDelegateTools } from "./delegate-tools.js";
import { registerInspectTools } from "./inspect-tools.js";
import { registerRaceTool } from "./race-tool.js";
import { rosterAtStart } from "./roster.js";
import { PACKAGE_VERSION } from "./version.js";

const INSTRUCTIONS = `caesar hands coding tasks to other coding agents (codex, claude, opencode, gemini, copilot, custom ones), each working in its own git worktree, and returns reports whose changes are checked against git.
Typical flow: caesar_list_agents (or caesar_list_roles) → caesar_delegate (or caesar_fanout for several tasks, caesar_race to compare agents on one) → caesar_await until complete, answering open questions with caesar_answer → caesar_diff → caesar_apply. To get a task's result in one call instead, pass \`wait: true\` to caesar_delegate (or caesar_fanout).
Tasks run on their own: they survive the end of this session, and caesar_status lists them later. caesar_logs shows what a task is doing; caesar_cancel stops it.
caesar_chat_* reach the project's agent chat, where its tasks' agents coordinate (they appear there as <agent>-<task hex>); name yourself with \`as\` / \`from\`.`;

/**
 * `caesar mcp serve`: the orchestrator's tools, over one project's tasks. Whom the server's caller reaches
 * is established as it starts, for caesar_delegate's published roster.
 */
export async function createOrchestratorServer(context: OrchestratorContext): Promise<McpServer> {
  const server = new McpServer({ name: "caesar", version: PACKAGE_VERSION }, { instructions: INSTRUCTIONS });
  registerDelegateTools(server, context, await rosterAtStart(context));
  registerRaceTool(server, context);
  registerAwaitTools(server, context);
  registerInspectTools(server, context);
  registerChangeTools(server, context);
  registerCatalogTools(server, context);
  // The folder its tasks' agents chat in (AGENT_CHAT_ROOT), unless this server was given another.
  mountChatTools(server, { chatRoot: context.env.AGENT_CHAT_ROOT || projectPaths(context.root).chat });
  return server;
}
