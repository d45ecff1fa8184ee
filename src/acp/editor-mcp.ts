import type * as acp from "@agentclientprotocol/sdk";
import type { AgentAdapter } from "../agents/adapter.js";
import type { McpServer } from "../protocol/mcp-server.js";

/** The editor's MCP servers (session/new, session/load, session/resume) in caesar's words. */
export function editorMcpServers(servers: acp.McpServer[] | undefined): McpServer[] {
  return (servers ?? []).map((server): McpServer => {
    const pairs = (list: { name: string; value: string }[] | undefined) =>
      Object.fromEntries((list ?? []).map(({ name, value }) => [name, value]));
    if ("type" in server && (server.type === "http" || server.type === "sse"))
      return { transport: server.type, name: server.name, url: server.url, headers: pairs(server.headers) };
    const stdio = server as acp.McpServerStdio;
    return {
      transport: "stdio",
      name: stdio.name,
      command: stdio.command,
      args: stdio.args ?? [],
      env: pairs(stdio.env),
    };
  });
}

/**
 * What became of the editor's MCP servers, for the editor's user: passed on to the delegate, or not, and
 * why (a read-only task, or an agent that cannot take them). Undefined when the editor gave none.
 */
export function mcpNotice(
  given: McpServer[],
  passed: McpServer[],
  plan: { agent: string; mode: string },
  adapter: Pick<AgentAdapter, "extraMcpServers">,
): string | undefined {
  if (given.length === 0) return undefined;
  const names = (servers: McpServer[]) => servers.map((server) => server.name).join(", ");
  if (passed.length > 0)
    return `Your MCP servers handed to ${plan.agent}: ${names(passed)} (one it cannot take is a finding).`;
  const why =
    plan.mode !== "write"
      ? "the task is read-only, and their tools could write"
      : `${plan.agent} cannot take them (${adapter.extraMcpServers?.why ?? "it has no way to load more MCP servers for one run"})`;
  return `Your MCP servers (${names(given)}) are not passed on: ${why}.`;
}
