import { PROTOCOLS } from "../protocol/versions.js";
import { type Conversation, completedSteps, findWorkingDirectory } from "./conversation.js";
import type { Scenario, Step } from "./scenario.js";
import { synthesize } from "./schema-value.js";
import {
  findShellTool,
  findToolByFragment,
  findWriteTool,
  namedArguments,
  type OfferedTool,
  STRUCTURED_OUTPUT_TOOL,
  shellArguments,
  writeArguments,
} from "./tools.js";

/** What the mock answers to one request. */
export type Decision =
  | { kind: "tool"; tool: OfferedTool; args: unknown; callId: string }
  /** Codex's client-side tool search, the way to reach deferred MCP tools. */
  | { kind: "tool_search"; query: string; callId: string }
  | { kind: "text"; text: string }
  | { kind: "error"; status: number; message: string; retryAfter?: number }
  | { kind: "hang" };

export interface Decided {
  decision: Decision;
  delayMs: number;
  /** Which step was played (for the request log). */
  step: number;
}

const DEFAULT_MESSAGES: Record<number, string> = {
  401: "mock: invalid api key",
  403: "mock: forbidden",
  404: "mock: model not found",
  429: "mock: rate limit exceeded",
  500: "mock: internal error",
  503: "mock: overloaded",
};

/** Decide the answer from the scenario and the conversation alone (no state between requests). */
export function decide(scenario: Scenario, conversation: Conversation): Decided {
  const turn = currentTurn(scenario.steps, conversation);
  const done = completedSteps({ ...conversation, calls: conversation.calls.slice(turn.callsBefore) });
  const index = turn.first + done.length;
  const step: Step | undefined = index < turn.end ? scenario.steps[index] : undefined;
  const delayMs = step && "delay_ms" in step ? (step.delay_ms ?? 0) : 0;
  const decided = (decision: Decision): Decided => ({ decision, delayMs, step: index });
  const callId = `call_${conversation.calls.length + 1}`;

  if (step && "fail" in step) {
    const status = step.fail.status;
    return decided({
      kind: "error",
      status,
      message: step.fail.message ?? DEFAULT_MESSAGES[status] ?? `mock: HTTP ${status}`,
      retryAfter: step.fail.retry_after,
    });
  }
  if (step && "hang" in step) return decided({ kind: "hang" });

  // Side calls (titles, routing, summaries) offer no tools: answer them without touching the script.
  if (conversation.tools.length === 0 && !conversation.responseSchema) {
    return decided({ kind: "text", text: "Mock session" });
  }
  if (conversation.tools.length === 0 && conversation.responseSchema) {
    return decided({ kind: "text", text: JSON.stringify(synthesize(conversation.responseSchema)) });
  }

  if (!step) return decided(finalText(conversation, "Done."));
  if ("shell" in step) {
    const tool = findShellTool(conversation.tools) ?? forced(step.force_tool);
    if (!tool) return decided({ kind: "text", text: "mock: the agent offered no shell tool." });
    return decided({
      kind: "tool",
      tool,
      args: shellArguments(tool, fill(step.shell, conversation), step.description),
      callId,
    });
  }
  if ("write" in step) {
    const tool = findWriteTool(conversation.tools) ?? forced(step.force_tool);
    if (!tool) return decided({ kind: "text", text: "mock: the agent offered no file-writing tool." });
    const cwd = findWorkingDirectory(conversation.raw);
    return decided({
      kind: "tool",
      tool,
      args: writeArguments(
        tool,
        fill(step.write.path, conversation),
        fill(step.write.content, conversation),
        cwd,
      ),
      callId,
    });
  }
  if ("call" in step) {
    const tool = findToolByFragment(conversation.tools, step.call.tool);
    if (tool) {
      const args = fillAll(step.call.arguments, conversation) as Record<string, unknown>;
      return decided({ kind: "tool", tool, args: namedArguments(tool, args), callId });
    }
    const search = searchForDeferred(conversation, step.call.tool, callId);
    if (search) return decided(search);
    return decided({ kind: "text", text: `mock: the agent offered no tool named like ${step.call.tool}.` });
  }
  if ("report" in step) {
    const report = { protocol: PROTOCOLS.report, ...step.report };
    const structured = conversation.tools.find((t) => t.name === STRUCTURED_OUTPUT_TOOL);
    if (structured)
      return decided({ kind: "tool", tool: structured, args: synthesize(structured.schema, report), callId });
    if (conversation.responseSchema) {
      return decided({ kind: "text", text: JSON.stringify(synthesize(conversation.responseSchema, report)) });
    }
    const fenced = `${step.report.summary}\n\n\`\`\`json caesar:report\n${JSON.stringify(report, null, 2)}\n\`\`\``;
    return decided({ kind: "text", text: fenced });
  }
  if ("text" in step) return decided(finalText(conversation, fill(step.text, conversation)));
  return decided(finalText(conversation, "Done."));
}

/**
 * The turn being played: the steps after the last `next_turn` whose text the conversation holds (in a
 * message that is neither a tool call nor a result), counted from the calls after that message.
 */
function currentTurn(
  steps: Step[],
  conversation: Conversation,
): { first: number; end: number; callsBefore: number } {
  for (let i = steps.length - 1; i >= 0; i--) {
    const step = steps[i]!;
    if (!("next_turn" in step)) continue;
    const note = conversation.notes.findLast((candidate) => candidate.text.includes(step.next_turn));
    if (!note) continue;
    const next = steps.findIndex((later, j) => j > i && "next_turn" in later);
    return { first: i + 1, end: next === -1 ? steps.length : next, callsBefore: note.callsBefore };
  }
  const next = steps.findIndex((step) => "next_turn" in step);
  return { first: 0, end: next === -1 ? steps.length : next, callsBefore: 0 };
}

function forced(name: string | undefined): OfferedTool | undefined {
  return name ? { name, kind: "function", schema: { type: "object" } } : undefined;
}

/** A final answer; when the request demands JSON (codex --output-schema), JSON carrying the text. */
function finalText(conversation: Conversation, text: string): Decision {
  if (!conversation.responseSchema) return { kind: "text", text };
  const value = synthesize(conversation.responseSchema, {
    protocol: PROTOCOLS.report,
    status: "success",
    summary: text,
    text,
    answer: text,
  });
  return { kind: "text", text: JSON.stringify(value) };
}

/** Templates in every string of a scenario's tool arguments. */
function fillAll(value: unknown, conversation: Conversation): unknown {
  if (typeof value === "string") return fill(value, conversation);
  if (Array.isArray(value)) return value.map((item) => fillAll(item, conversation));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillAll(v, conversation)]));
  }
  return value;
}

/**
 * `{{last_result}}`, `{{result:N}}` (the N-th scripted call's result), `{{report_path}}` (the absolute
 * path of a report.json the agent was told about, e.g. by caesar's brief), `{{task_id}}` (the task id in
 * that path, `.caesar/tasks/<id>/report.json`) and `{{cwd}}` (the working directory the agent stated).
 */
function fill(text: string, conversation: Conversation): string {
  const done = completedSteps(conversation);
  const reportPath = () => /\/[^\s"'`\\]*\/report\.json/.exec(conversation.raw)?.[0];
  return text
    .replace(/\{\{cwd\}\}/g, () => findWorkingDirectory(conversation.raw) ?? ".")
    .replace(/\{\{report_path\}\}/g, () => reportPath() ?? "report.json")
    .replace(/\{\{task_id\}\}/g, () => /\/tasks\/([^/]+)\/report\.json$/.exec(reportPath() ?? "")?.[1] ?? "")
    .replace(/\{\{last_result\}\}/g, () => done.at(-1)?.result ?? "")
    .replace(/\{\{result:(\d+)\}\}/g, (_m, n: string) => done[Number(n) - 1]?.result ?? "");
}

/**
 * Deferred tools: codex and claude list MCP tools by name only and expect the model to search for them
 * first (codex `tool_search`, claude `ToolSearch select:<name>`). A search already made is not repeated.
 */
function searchForDeferred(
  conversation: Conversation,
  fragment: string,
  callId: string,
): Decision | undefined {
  // One search per wanted tool: a search that found nothing is not repeated forever.
  const searched = conversation.calls.some(
    (c) =>
      (c.name === "tool_search" || c.name === "ToolSearch") &&
      JSON.stringify(c.args ?? "").includes(fragment),
  );
  if (searched) return undefined;
  if (conversation.api === "responses" && /tool_search/.test(conversation.raw)) {
    const offered = conversation.tools.some((t) => t.name === "tool_search");
    if (offered) return { kind: "tool_search", query: fragment, callId };
  }
  const toolSearch = conversation.tools.find((t) => t.name === "ToolSearch");
  if (toolSearch) {
    const escaped = fragment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    // Prefer an MCP-looking name (mcp__server__tool) over any other mention of the fragment.
    const name =
      new RegExp(`mcp__[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*__${escaped}`).exec(conversation.raw)?.[0] ??
      new RegExp(`[A-Za-z0-9_.-]*${escaped}[A-Za-z0-9_.-]*`).exec(conversation.raw)?.[0] ??
      fragment;
    return {
      kind: "tool",
      tool: toolSearch,
      args: namedArguments(toolSearch, { query: `select:${name}` }),
      callId,
    };
  }
  return undefined;
}
