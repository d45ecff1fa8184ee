import { appendFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Conversation, WireApi } from "./conversation.js";
import { type Decided, decide } from "./decide.js";
import type { Scenario } from "./scenario.js";
import {
  countTokens,
  parseMessagesRequest,
  writeMessagesAnswer,
  writeMessagesError,
} from "./wire/anthropic-messages.js";
import { parseChatRequest, writeChatAnswer, writeChatError } from "./wire/chat-completions.js";
import { parseGeminiRequest, writeGeminiAnswer, writeGeminiError } from "./wire/gemini.js";
import { asRecord, type Json, sendJson } from "./wire/http.js";
import { parseResponsesRequest, writeResponsesAnswer, writeResponsesError } from "./wire/openai-responses.js";

/** Requests larger than this are refused (claude sends ~90 KB; a runaway client must not fill memory). */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

export interface MockModelOptions {
  scenario: Scenario;
  /** 0 (default) picks a free port. */
  port?: number;
  /** Append one JSON line per request to this file (method, url, api, tools offered, decision). */
  logFile?: string;
  /** Also log request bodies (large: claude's are ~90 KB). */
  logBodies?: boolean;
  /** Called for every request, after it was answered (tests, `--verbose`). */
  onRequest?: (entry: RequestLogEntry) => void;
}

export interface RequestLogEntry {
  at: string;
  method: string;
  url: string;
  api?: WireApi | "side";
  model?: string;
  tools?: string[];
  step?: number;
  /** How many tool calls the request's conversation replays (a resumed session replays the earlier ones). */
  history?: number;
  decision?: string;
  status: number;
  body?: unknown;
}

export interface MockModelServer {
  /** Base URL without a path, e.g. `http://127.0.0.1:41234`. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Start the scripted model server on 127.0.0.1 only. */
export function startMockModel(options: MockModelOptions): Promise<MockModelServer> {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    handle(req, res, options).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: `mock: ${String(error)}` } });
      else res.destroy();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    // Loopback only: the mock answers whatever it is sent and must never be reachable from elsewhere.
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        port,
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error("request body too large"));
        req.destroy();
        return;
      }
      parts.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}

type Route =
  | { api: "responses" | "chat" | "anthropic" }
  | { api: "gemini"; model: string; stream: boolean; sse: boolean }
  | { side: "count_tokens" | "gemini_count_tokens" | "models" | "hello" };

function route(method: string, url: URL): Route | undefined {
  const path = url.pathname;
  if (method === "POST") {
    if (path.endsWith("/responses")) return { api: "responses" };
    if (path.endsWith("/chat/completions")) return { api: "chat" };
    if (path.endsWith("/messages/count_tokens")) return { side: "count_tokens" };
    if (path.endsWith("/messages")) return { api: "anthropic" };
    const gemini = /\/models\/([^/:]+):(streamGenerateContent|generateContent|countTokens)$/.exec(path);
    if (gemini) {
      if (gemini[2] === "countTokens") return { side: "gemini_count_tokens" };
      const stream = gemini[2] === "streamGenerateContent";
      return {
        api: "gemini",
        model: decodeURIComponent(gemini[1]!),
        stream,
        sse: url.searchParams.get("alt") === "sse",
      };
    }
  }
  if ((method === "GET" || method === "HEAD") && /\/models\/?$/.test(path)) return { side: "models" };
  if ((method === "GET" || method === "HEAD") && (path === "/" || path.endsWith("/api/hello"))) {
    return { side: "hello" };
  }
  return undefined;
}

const MODEL_IDS = ["mock-model", "gpt-5.5", "gpt-4.1", "claude-sonnet-4-5", "gemini-2.5-flash"];

async function handle(req: IncomingMessage, res: ServerResponse, options: MockModelOptions): Promise<void> {
  const method = req.method ?? "GET";
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  const raw = method === "POST" ? await readBody(req) : "";
  const entry: RequestLogEntry = {
    at: new Date().toISOString(),
    method,
    url: url.pathname + url.search,
    status: 200,
  };
  const log = () => {
    if (options.logFile) appendFileSync(options.logFile, `${JSON.stringify(entry)}\n`);
    options.onRequest?.(entry);
  };
  const target = route(method, url);
  if (!target) {
    entry.status = 404;
    sendJson(res, 404, { error: { message: `mock: no route for ${method} ${url.pathname}` } });
    log();
    return;
  }
  if ("side" in target) {
    entry.api = "side";
    answerSide(res, target.side, raw);
    log();
    return;
  }
  let body: Json;
  try {
    body = asRecord(JSON.parse(raw));
  } catch {
    entry.status = 400;
    sendJson(res, 400, { error: { message: "mock: the request body is not JSON" } });
    log();
    return;
  }
  if (options.logBodies) entry.body = body;
  const conversation = parse(target, body, raw);
  const decided = decide(options.scenario, conversation);
  entry.api = conversation.api;
  entry.model = conversation.model;
  entry.tools = conversation.tools.map((t) => (t.namespace ? `${t.namespace}/${t.name}` : t.name));
  entry.step = decided.step;
  entry.history = conversation.calls.length;
  entry.decision = describe(decided);
  if (decided.delayMs > 0) await new Promise((done) => setTimeout(done, decided.delayMs));
  const { decision } = decided;
  if (decision.kind === "hang") {
    log();
    return; // the socket stays open until the client gives up or the server closes
  }
  if (decision.kind === "error") {
    entry.status = decision.status;
    const headers: Json =
      decision.retryAfter === undefined ? {} : { "retry-after": String(decision.retryAfter) };
    writeError(conversation.api, res, decision.status, decision.message, headers);
    log();
    return;
  }
  if (target.api === "gemini") writeGeminiAnswer(res, conversation, decision, target.sse);
  else if (target.api === "responses") writeResponsesAnswer(res, conversation, decision);
  else if (target.api === "chat") writeChatAnswer(res, conversation, decision);
  else writeMessagesAnswer(res, conversation, decision);
  log();
}

function parse(target: Exclude<Route, { side: string }>, body: Json, raw: string): Conversation {
  switch (target.api) {
    case "responses":
      return parseResponsesRequest(body, raw);
    case "chat":
      return parseChatRequest(body, raw);
    case "anthropic":
      return parseMessagesRequest(body, raw);
    case "gemini":
      return parseGeminiRequest(body, raw, target.model, target.stream);
  }
}

function writeError(api: WireApi, res: ServerResponse, status: number, message: string, headers: Json): void {
  if (api === "anthropic") writeMessagesError(res, status, message, headers);
  else if (api === "gemini") writeGeminiError(res, status, message, headers);
  else if (api === "chat") writeChatError(res, status, message, headers);
  else writeResponsesError(res, status, message, headers);
}

function answerSide(res: ServerResponse, side: string, raw: string): void {
  if (side === "count_tokens") {
    sendJson(res, 200, { input_tokens: countTokens(raw) });
    return;
  }
  if (side === "gemini_count_tokens") {
    sendJson(res, 200, { totalTokens: countTokens(raw) });
    return;
  }
  if (side === "hello") {
    sendJson(res, 200, { ok: true, server: "caesar mock-model" });
    return;
  }
  // One listing that satisfies the OpenAI, Anthropic and Gemini clients alike.
  const created = Math.floor(Date.now() / 1000);
  sendJson(res, 200, {
    object: "list",
    data: MODEL_IDS.map((id) => ({
      id,
      object: "model",
      type: "model",
      created,
      owned_by: "mock",
      display_name: id,
    })),
    has_more: false,
    models: MODEL_IDS.map((id) => ({
      name: `models/${id}`,
      displayName: id,
      supportedGenerationMethods: ["generateContent", "streamGenerateContent", "countTokens"],
    })),
  });
}

function describe(decided: Decided): string {
  const { decision } = decided;
  switch (decision.kind) {
    case "tool":
      return `tool ${decision.tool.namespace ? `${decision.tool.namespace}/` : ""}${decision.tool.name}`;
    case "tool_search":
      return `tool_search ${decision.query}`;
    case "text":
      return `text ${decision.text.slice(0, 60)}`;
    case "error":
      return `error ${decision.status}`;
    case "hang":
      return "hang";
  }
}
