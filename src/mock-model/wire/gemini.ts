import { type Conversation, type Note, type PastCall, resultText } from "../conversation.js";
import type { Decision } from "../decide.js";
import type { JsonSchema } from "../schema-value.js";
import type { OfferedTool } from "../tools.js";
import {
  type Answer,
  asArray,
  asRecord,
  asString,
  EventStream,
  type Json,
  jsonAnswer,
  MOCK_USAGE,
} from "./answer.js";

/** Gemini API (`POST …/models/<m>:streamGenerateContent` and `:generateContent`): gemini-cli. */
export function parseGeminiRequest(body: Json, raw: string, model: string, stream: boolean): Conversation {
  const tools: OfferedTool[] = [];
  for (const rawGroup of asArray(body.tools)) {
    for (const rawDecl of asArray(asRecord(rawGroup).functionDeclarations)) {
      const decl = asRecord(rawDecl);
      const name = asString(decl.name);
      if (name) {
        tools.push({
          name,
          kind: "function",
          schema: asRecord(decl.parametersJsonSchema ?? decl.parameters) as JsonSchema,
          description: asString(decl.description),
        });
      }
    }
  }
  // Gemini pairs calls and responses by order and name; ids are optional.
  const calls: PastCall[] = [];
  const notes: Note[] = [];
  for (const rawContent of asArray(body.contents)) {
    for (const rawPart of asArray(asRecord(rawContent).parts)) {
      const part = asRecord(rawPart);
      const call = asRecord(part.functionCall);
      const response = asRecord(part.functionResponse);
      if (asString(call.name)) {
        calls.push({ name: call.name as string, id: asString(call.id) ?? `call_${calls.length + 1}` });
      } else if (asString(response.name)) {
        const open = calls.find((c) => c.result === undefined && c.name === response.name);
        if (open) open.result = resultText(response.response);
      } else if (typeof part.text === "string") notes.push({ text: part.text, callsBefore: calls.length });
    }
  }
  const config = asRecord(body.generationConfig);
  const schema = config.responseJsonSchema ?? config.responseSchema;
  const responseSchema =
    config.responseMimeType === "application/json" && schema ? (asRecord(schema) as JsonSchema) : undefined;
  return { api: "gemini", model, stream, tools, calls, notes, responseSchema, raw };
}

function candidateResponse(conversation: Conversation, decision: Decision): Json {
  const part =
    decision.kind === "tool"
      ? { functionCall: { name: decision.tool.name, args: decision.args, id: decision.callId } }
      : { text: decision.kind === "text" ? decision.text : "" };
  return {
    candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
    usageMetadata: {
      promptTokenCount: MOCK_USAGE.input,
      candidatesTokenCount: MOCK_USAGE.output,
      totalTokenCount: MOCK_USAGE.input + MOCK_USAGE.output,
    },
    modelVersion: conversation.model,
    responseId: "mock",
  };
}

/** `alt=sse` streams one event; without it streamGenerateContent returns a JSON array of responses. */
export function answerGemini(conversation: Conversation, decision: Decision, sse: boolean): Answer {
  const response = candidateResponse(conversation, decision);
  if (sse) {
    const events = new EventStream();
    events.send(response);
    return events.answer();
  }
  return jsonAnswer(200, conversation.stream ? [response] : response);
}

export function failGemini(status: number, message: string, headers: Json): Answer {
  const statusName =
    status === 401
      ? "UNAUTHENTICATED"
      : status === 403
        ? "PERMISSION_DENIED"
        : status === 404
          ? "NOT_FOUND"
          : status === 429
            ? "RESOURCE_EXHAUSTED"
            : status === 503
              ? "UNAVAILABLE"
              : "INTERNAL";
  return jsonAnswer(status, { error: { code: status, message, status: statusName } }, headers);
}
