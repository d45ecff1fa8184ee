import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { CAESAR_BIN } from "./cli.js";

export interface CaesarMcp {
  client: Client;
  /** What the server wrote on stderr so far. */
  stderr(): string;
  call(name: string, args?: Record<string, unknown>, timeoutMs?: number): Promise<CallToolResult>;
  close(): Promise<void>;
}

/** Start the real `caesar <args>` (an MCP stdio server) and connect the official SDK client to it. */
export async function connectCaesar(
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<CaesarMcp> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith("CAESAR_")) env[key] = value;
  }
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CAESAR_BIN, ...args],
    cwd: options.cwd,
    env: { ...env, NO_COLOR: "1", ...options.env },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const client = new Client({ name: "caesar-test", version: "1.0.0" });
  await client.connect(transport);
  return {
    client,
    stderr: () => stderr,
    call: async (name, callArgs = {}, timeoutMs = 150_000) =>
      (await client.callTool({ name, arguments: callArgs }, undefined, {
        timeout: timeoutMs,
      })) as CallToolResult,
    close: () => client.close(),
  };
}

export function textOf(result: CallToolResult): string {
  return result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
}

/** The structured result of a successful call; fails the test with the tool's text when it is an error. */
export function dataOf<T = Record<string, unknown>>(result: CallToolResult): T {
  if (result.isError) throw new Error(`tool error: ${textOf(result)}`);
  return result.structuredContent as T;
}

/**
 * The structured result of a call that carries one even when it is an error — caesar_await is an error
 * (as the seed's await_sessions) unless every task finished well, yet returns its whole result.
 */
export function resultOf<T = Record<string, unknown>>(result: CallToolResult): T {
  const value = result.structuredContent as Record<string, unknown> | undefined;
  if (!value || "error" in value) throw new Error(`no result: ${textOf(result)}`);
  return value as T;
}
