import { type Conversation, PastCalls } from "../conversation.js";
import type { Decision } from "../decide.js";
import type { JsonSchema } from "../schema-value.js";
import type { OfferedTool } from "../tools.js";
import {
  type Answer,
  asArray,
  asRecord,
  asString,
  chunks,
  EventStream,
  type Json,
  jsonAnswer,
  MOCK_USAGE,
  nowSeconds,
} from "./answer.js";

/** OpenAI Responses API (`POST …/responses`): codex, and copilot with COPILOT_PROVIDER_WIRE_API=responses. */
export function parseResponsesRequest(body: Json, raw: string): Conversation {
  const tools: OfferedTool[] = [];
  collectTools(asArray(body.tools), tools);
  const calls = new PastCalls();
  for (const rawItem of asArray(body.input)) {
    const item = asRecord(rawItem);
    const type = asString(item.type);
    const id = asString(item.call_id) ?? asString(item.id) ?? "";
    if (type === "function_call" || type === "custom_tool_call" || type === "local_shell_call") {
      calls.add({ name: asString(item.name) ?? type, id, args: item.arguments ?? item.input });
    } else if (type === "tool_search_call") {
      calls.add({ name: "tool_search", id, args: item.arguments });
    } else if (
      type === "function_call_output" ||
      type === "custom_tool_call_output" ||
      type === "local_shell_call_output" ||
      type === "tool_search_output"
    ) {
      calls.answer(id, item.output);
      // Tools revealed by a search become callable.
      if (type === "tool_search_output") collectTools(asArray(item.tools), tools);
    } else calls.note(item.content ?? item);
  }
  const format = asRecord(asRecord(body.text).format);
  const responseSchema = format.type === "json_schema" ? (asRecord(format.schema) as JsonSchema) : undefined;
  return {
    api: "responses",
    model: asString(body.model) ?? "mock-model",
    stream: body.stream === true,
    tools,
    calls: calls.list,
    notes: calls.notes,
    responseSchema,
    raw,
  };
}

function collectTools(list: unknown[], into: OfferedTool[], namespace?: string): void {
  for (const rawTool of list) {
    const tool = asRecord(rawTool);
    const type = asString(tool.type);
    const name = asString(tool.name);
    if (type === "namespace" && name) {
      collectTools(asArray(tool.tools), into, name);
    } else if (type === "function" && name) {
      into.push({
        name,
        namespace,
        kind: "function",
        schema: asRecord(tool.parameters) as JsonSchema,
        description: asString(tool.description),
      });
    } else if (type === "custom" && name) {
      into.push({ name, namespace, kind: "custom", schema: {}, description: asString(tool.description) });
    } else if (type === "tool_search") {
      into.push({ name: "tool_search", kind: "function", schema: asRecord(tool.parameters) as JsonSchema });
    }
  }
}

function outputItem(decision: Decision): Json | undefined {
  switch (decision.kind) {
    case "tool": {
      const { tool, args, callId } = decision;
      if (tool.kind === "custom") {
        return {
          type: "custom_tool_call",
          id: `ctc_${callId}`,
          call_id: callId,
          name: tool.name,
          input: typeof args === "string" ? args : JSON.stringify(args),
          status: "completed",
        };
      }
      return {
        type: "function_call",
        id: `fc_${callId}`,
        call_id: callId,
        name: tool.name,
        ...(tool.namespace ? { namespace: tool.namespace } : {}),
        arguments: JSON.stringify(args),
        status: "completed",
      };
    }
    case "tool_search":
      return {
        type: "tool_search_call",
        id: `ts_${decision.callId}`,
        call_id: decision.callId,
        execution: "client",
        arguments: { query: decision.query },
        status: "completed",
      };
    case "text":
      return {
        type: "message",
        id: "msg_mock",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: decision.text, annotations: [] }],
      };
    default:
      return undefined;
  }
}

function response(conversation: Conversation, status: string, output: Json[]): Json {
  return {
    id: "resp_mock",
    object: "response",
    created_at: nowSeconds(),
    status,
    model: conversation.model,
    output,
    usage:
      status === "completed"
        ? {
            input_tokens: MOCK_USAGE.input,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: MOCK_USAGE.output,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: MOCK_USAGE.input + MOCK_USAGE.output,
          }
        : null,
  };
}

export function answerResponses(conversation: Conversation, decision: Decision): Answer {
  const item = outputItem(decision);
  const output = item ? [item] : [];
  if (!conversation.stream) {
    return jsonAnswer(200, response(conversation, "completed", output));
  }
  const sse = new EventStream();
  let seq = 0;
  const send = (type: string, data: Json) => sse.send({ type, sequence_number: seq++, ...data }, type);
  send("response.created", { response: response(conversation, "in_progress", []) });
  send("response.in_progress", { response: response(conversation, "in_progress", []) });
  if (item) {
    const inProgress: Json = { ...item, status: "in_progress" };
    if (item.type === "function_call") inProgress.arguments = "";
    if (item.type === "message") inProgress.content = [];
    send("response.output_item.added", { output_index: 0, item: inProgress });
    if (item.type === "function_call") {
      for (const delta of chunks(String(item.arguments))) {
        send("response.function_call_arguments.delta", { item_id: item.id, output_index: 0, delta });
      }
      send("response.function_call_arguments.done", {
        item_id: item.id,
        output_index: 0,
        arguments: item.arguments,
      });
    } else if (item.type === "custom_tool_call") {
      send("response.custom_tool_call_input.delta", { item_id: item.id, output_index: 0, delta: item.input });
      send("response.custom_tool_call_input.done", { item_id: item.id, output_index: 0, input: item.input });
    } else if (item.type === "message") {
      const text = decision.kind === "text" ? decision.text : "";
      const part = { type: "output_text", text: "", annotations: [] };
      send("response.content_part.added", { item_id: item.id, output_index: 0, content_index: 0, part });
      for (const delta of chunks(text)) {
        send("response.output_text.delta", { item_id: item.id, output_index: 0, content_index: 0, delta });
      }
      send("response.output_text.done", { item_id: item.id, output_index: 0, content_index: 0, text });
      send("response.content_part.done", {
        item_id: item.id,
        output_index: 0,
        content_index: 0,
        part: { ...part, text },
      });
    }
    send("response.output_item.done", { output_index: 0, item });
  }
  send("response.completed", { response: response(conversation, "completed", output) });
  return sse.answer();
}

export function failResponses(status: number, message: string, headers: Json): Answer {
  const code = status === 401 ? "invalid_api_key" : status === 429 ? "rate_limit_exceeded" : "server_error";
  return jsonAnswer(status, { error: { message, type: code, param: null, code } }, headers);
}
