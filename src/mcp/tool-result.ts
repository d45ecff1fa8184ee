import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { diskFullError, isCaesarError, messageOf } from "../support/errors.js";

/**
 * A tool's successful result: the value as JSON text (what every model reads) and as structured content
 * (what programs read), optionally preceded by one line saying what it means.
 */
export function toolResult(value: Record<string, unknown>, headline?: string): CallToolResult {
  const json = JSON.stringify(value, null, 2);
  return {
    content: [{ type: "text", text: headline ? `${headline}\n${json}` : json }],
    structuredContent: value,
  };
}

/**
 * A refusal or failure as a tool error (never a crash of the server): what happened, then what to do,
 * with the stable code. Errors that are not caesar's own are reported as internal errors.
 */
export function toolError(error: unknown): CallToolResult {
  const known = isCaesarError(error) ? error : diskFullError(error);
  const body = known
    ? { code: known.code, summary: known.message, detail: known.detail }
    : {
        code: "internal_error",
        summary: `Internal error: ${messageOf(error)}`,
        detail: "This is a bug in caesar. Please report it with the tool call that caused it.",
      };
  const text = [body.summary, body.detail, `(code: ${body.code})`].filter((part) => part !== "").join("\n");
  return { content: [{ type: "text", text }], structuredContent: { error: body }, isError: true };
}

/** Run a tool's body, turning whatever it throws into a tool error. */
export async function runTool(body: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await body();
  } catch (error) {
    return toolError(error);
  }
}
