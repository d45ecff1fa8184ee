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
} from "./answer.js";

/** Anthropic Messages (`POST …/messages`): claude, and copilot with COPILOT_PROVIDER_TYPE=anthropic. */
export function parseMessagesRequest(body: Json, raw: string): Conversation {
  const tools: OfferedTool[] = [];
  for (const rawTool of asArray(body.tools)) {
    const tool = asRecord(rawTool);
    const name = asString(tool.name);
    // Server tools (web_search_20250305, …) have a `type` and no schema; the mock never calls them.
    if (name && tool.input_schema) {
      tools.push({
        name,
        kind: "function",
        schema: asRecord(tool.input_schema) as JsonSchema,
        description: asString(tool.description),
      });
    }
  }
  const calls = new PastCalls();
  for (const rawMessage of asArray(body.messages)) {
    const content = asRecord(rawMessage).content;
    if (typeof content === "string") calls.note(content);
    for (const rawBlock of asArray(content)) {
      const block = asRecord(rawBlock);
      if (block.type === "tool_use")
        calls.add({ name: asString(block.name) ?? "", id: asString(block.id) ?? "", args: block.input });
      else if (block.type === "tool_result") calls.answer(asString(block.tool_use_id), block.content);
      else calls.note(block.text ?? block);
    }
  }
  const format = asRecord(asRecord(body.output_config).format ?? body.output_format);
  const responseSchema = format.type === "json_schema" ? (asRecord(format.schema) as JsonSchema) : undefined;
  return {
    api: "anthropic",
    model: asString(body.model) ?? "mock-model",
    stream: body.stream === true,
    tools,
    calls: calls.list,
    notes: calls.notes,
    responseSchema,
    raw,
  };
}

function contentBlock(decision: Decision): Json {
  if (decision.kind === "tool") {
    // Anthropic ids look like toolu_…; keep the scenario's counter in them.
    return {
      type: "tool_use",
      id: `toolu_${decision.callId.replace(/^call_/, "")}`,
      name: decision.tool.name,
      input: decision.args,
    };
  }
  return { type: "text", text: decision.kind === "text" ? decision.text : "" };
}

export function answerMessages(conversation: Conversation, decision: Decision): Answer {
  const block = contentBlock(decision);
  const stopReason = block.type === "tool_use" ? "tool_use" : "end_turn";
  const message = {
    id: "msg_mock",
    type: "message",
    role: "assistant",
    model: conversation.model,
    content: [block],
    stop_reason: stopReason,
    stop_sequence: null,
    usage: {
      input_tokens: MOCK_USAGE.input,
      output_tokens: MOCK_USAGE.output,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    },
  };
  if (!conversation.stream) {
    return jsonAnswer(200, message);
  }
  const sse = new EventStream();
  const send = (type: string, data: Json) => sse.send({ type, ...data }, type);
  send("message_start", {
    message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 1 } },
  });
  if (block.type === "tool_use") {
    send("content_block_start", { index: 0, content_block: { ...block, input: {} } });
    for (const piece of chunks(JSON.stringify(block.input))) {
      send("content_block_delta", { index: 0, delta: { type: "input_json_delta", partial_json: piece } });
    }
  } else {
    send("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
    for (const piece of chunks(String(block.text))) {
      send("content_block_delta", { index: 0, delta: { type: "text_delta", text: piece } });
    }
  }
  send("content_block_stop", { index: 0 });
  send("message_delta", {
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: MOCK_USAGE.output },
  });
  send("message_stop", {});
  return sse.answer();
}

export function failMessages(status: number, message: string, headers: Json): Answer {
  const type =
    status === 401
      ? "authentication_error"
      : status === 403
        ? "permission_error"
        : status === 429
          ? "rate_limit_error"
          : status === 529
            ? "overloaded_error"
            : "api_error";
  return jsonAnswer(status, { type: "error", error: { type, message } }, headers);
}

/** `POST …/messages/count_tokens`: a rough count, enough for clients that budget their context. */
export function countTokens(raw: string): number {
  return Math.max(1, Math.ceil(raw.length / 4));
}
