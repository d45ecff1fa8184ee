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

/** OpenAI Chat Completions (`POST …/chat/completions`): opencode, copilot (default BYOK wire). */
export function parseChatRequest(body: Json, raw: string): Conversation {
  const tools: OfferedTool[] = [];
  for (const rawTool of asArray(body.tools)) {
    const fn = asRecord(asRecord(rawTool).function);
    const name = asString(fn.name);
    if (name) {
      tools.push({
        name,
        kind: "function",
        schema: asRecord(fn.parameters) as JsonSchema,
        description: asString(fn.description),
      });
    }
  }
  const calls = new PastCalls();
  for (const rawMessage of asArray(body.messages)) {
    const message = asRecord(rawMessage);
    if (message.role === "assistant") {
      if (message.content) calls.note(message.content);
      for (const rawCall of asArray(message.tool_calls)) {
        const call = asRecord(rawCall);
        calls.add({ name: asString(asRecord(call.function).name) ?? "", id: asString(call.id) ?? "" });
      }
    } else if (message.role === "tool") calls.answer(asString(message.tool_call_id), message.content);
    else calls.note(message.content);
  }
  const format = asRecord(body.response_format);
  const responseSchema =
    format.type === "json_schema" ? (asRecord(asRecord(format.json_schema).schema) as JsonSchema) : undefined;
  return {
    api: "chat",
    model: asString(body.model) ?? "mock-model",
    stream: body.stream === true,
    tools,
    calls: calls.list,
    notes: calls.notes,
    responseSchema,
    raw,
  };
}

function toolCall(decision: Decision): Json | undefined {
  if (decision.kind !== "tool") return undefined;
  return {
    id: decision.callId,
    type: "function",
    function: { name: decision.tool.name, arguments: JSON.stringify(decision.args) },
  };
}

const usage = {
  prompt_tokens: MOCK_USAGE.input,
  completion_tokens: MOCK_USAGE.output,
  total_tokens: MOCK_USAGE.input + MOCK_USAGE.output,
};

export function answerChat(conversation: Conversation, decision: Decision): Answer {
  const call = toolCall(decision);
  const text = decision.kind === "text" ? decision.text : "";
  const finish = call ? "tool_calls" : "stop";
  const base = { id: "chatcmpl-mock", created: nowSeconds(), model: conversation.model };
  if (!conversation.stream) {
    return jsonAnswer(200, {
      ...base,
      object: "chat.completion",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: call ? null : text,
            ...(call ? { tool_calls: [call] } : {}),
          },
          finish_reason: finish,
        },
      ],
      usage,
    });
  }
  const sse = new EventStream();
  const chunk = (delta: Json, finishReason: string | null = null) =>
    sse.send({
      ...base,
      object: "chat.completion.chunk",
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    });
  if (call) {
    const fn = call.function as Json;
    chunk({
      role: "assistant",
      content: null,
      tool_calls: [{ index: 0, id: call.id, type: "function", function: { name: fn.name, arguments: "" } }],
    });
    for (const piece of chunks(String(fn.arguments))) {
      chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] });
    }
  } else {
    chunk({ role: "assistant", content: "" });
    for (const piece of chunks(text)) chunk({ content: piece });
  }
  chunk({}, finish);
  sse.send({ ...base, object: "chat.completion.chunk", choices: [], usage });
  sse.send("[DONE]");
  return sse.answer();
}

export function failChat(status: number, message: string, headers: Json): Answer {
  const code = status === 401 ? "invalid_api_key" : status === 429 ? "rate_limit_exceeded" : "server_error";
  return jsonAnswer(status, { error: { message, type: code, param: null, code } }, headers);
}
