import type { JsonSchema } from "./schema-value.js";
import { META_TOOLS, type OfferedTool } from "./tools.js";

export type WireApi = "responses" | "chat" | "anthropic" | "gemini";

/** One tool call the assistant made earlier in the conversation, and its result if it came back. */
export interface PastCall {
  name: string;
  id: string;
  /** The call's arguments as sent (JSON text or an object), to know what a search looked for. */
  args?: unknown;
  result?: string;
}

/** A message of the conversation that is neither a tool call nor a result, and where it came. */
export interface Note {
  text: string;
  /** How many tool calls the conversation held before it. */
  callsBefore: number;
}

/** The tool calls a request replays, in order; a result found later is matched to its call by id. */
export class PastCalls {
  readonly list: PastCall[] = [];
  readonly notes: Note[] = [];
  private readonly byId = new Map<string, PastCall>();

  /** Any other message (a prompt, an answer), kept as text to find a scenario's turn markers in. */
  note(content: unknown): void {
    const text = typeof content === "string" ? content : JSON.stringify(content ?? "");
    if (text) this.notes.push({ text, callsBefore: this.list.length });
  }

  add(call: PastCall): void {
    this.list.push(call);
    this.byId.set(call.id, call);
  }

  /** The result of call `id` (ignored when no such call was made). */
  answer(id: string | undefined, content: unknown): void {
    const call = this.byId.get(id ?? "");
    if (call) call.result = resultText(content);
  }
}

/** What the mock needs to know about one request, whatever the wire format. */
export interface Conversation {
  api: WireApi;
  model: string;
  stream: boolean;
  tools: OfferedTool[];
  calls: PastCall[];
  /** The other messages in order, each with the number of calls before it (to find where a turn began). */
  notes: Note[];
  /** Set when the final answer must be JSON matching this schema (response format, router calls). */
  responseSchema?: JsonSchema;
  /** The whole request body as text, to find deferred tool names and the working directory. */
  raw: string;
}

/** Calls that count as scenario steps: scripted calls (not tool searches) that have their result. */
export function completedSteps(conversation: Conversation): PastCall[] {
  return conversation.calls.filter((call) => call.result !== undefined && !META_TOOLS.has(call.name));
}

/** The working directory the agent told the model about, when its system prompt says it. */
export function findWorkingDirectory(raw: string): string | undefined {
  const patterns = [
    /working directory: (\/[^\s"\\<]+)/i,
    /"cwd"\s*:\s*"(\/[^"\\]+)"/,
    /<cwd>(\/[^<]+)<\/cwd>/,
    /current working directory(?: is)?:? `?(\/[^\s"`\\]+)/i,
    /Workspace(?: root)?: (\/[^\s"\\<]+)/,
  ];
  for (const pattern of patterns) {
    const match = pattern.exec(raw);
    if (match) return match[1];
  }
  return undefined;
}

/** Text of a tool result, whatever shape the wire format gave it. */
export function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map(resultText).join("");
  if (content && typeof content === "object") {
    const record = content as Record<string, unknown>;
    if (typeof record.text === "string") return record.text;
    if ("output" in record) return resultText(record.output);
    if ("content" in record) return resultText(record.content);
    if ("response" in record) return resultText(record.response);
    return JSON.stringify(content);
  }
  return content === undefined || content === null ? "" : String(content);
}
