import { appendFileSync } from "node:fs";
import type { AddressInfo, Socket } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { streamSSE } from "hono/streaming";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { MOCK_API_KEY } from "./agent-env.js";
import type { Conversation, WireApi } from "./conversation.js";
import { type Decided, decide } from "./decide.js";
import type { Scenario } from "./scenario.js";
import { type Answer, asRecord, type Json } from "./wire/answer.js";
import {
  answerMessages,
  countTokens,
  failMessages,
  parseMessagesRequest,
} from "./wire/anthropic-messages.js";
import { answerChat, failChat, parseChatRequest } from "./wire/chat-completions.js";
import { answerGemini, failGemini, parseGeminiRequest } from "./wire/gemini.js";
import { answerResponses, failResponses, parseResponsesRequest } from "./wire/openai-responses.js";

/** Requests larger than this are refused (claude sends ~90 KB; a runaway client must not fill memory). */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

export interface MockModelOptions {
  scenario: Scenario;
  /** 0 (default) picks a free port. */
  port?: number;
  /** The address it listens on: 127.0.0.1 unless told (a test reaching it the way a provider is reached). */
  host?: string;
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
  /**
   * The key the request carried (`x-api-key`, `x-goog-api-key`, `Authorization: Bearer`, `?key=`): the one
   * `--print-env` gives the CLIs (`mock`), another (`other`: its value is never logged), or none.
   */
  key: "mock" | "other" | "none";
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
  const server = createAdaptorServer({ fetch: createMockModelApp(options).fetch });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    // Loopback only: the mock answers whatever it is sent and must never be reachable from elsewhere.
    const host = options.host ?? "127.0.0.1";
    server.listen(options.port ?? 0, host, () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
        port,
        close: () =>
          new Promise<void>((done) => {
            // Hanging requests included: their clients see the connection close.
            for (const socket of sockets) socket.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

/** The request being answered: logged once, when answered (or when it starts to hang). */
interface Exchange {
  entry: RequestLogEntry;
  logged: boolean;
}

type Env = { Variables: { exchange: Exchange } };

function keyOf(headers: Record<string, string>, query: string | null): RequestLogEntry["key"] {
  const bearer = /^Bearer\s+(.+)$/i.exec(headers.authorization ?? "")?.[1];
  const given = [headers["x-api-key"], headers["x-goog-api-key"], bearer, query ?? undefined].filter(
    (value): value is string => value !== undefined && value !== "",
  );
  if (given.length === 0) return "none";
  return given.every((value) => value === MOCK_API_KEY) ? "mock" : "other";
}

/** The model's wire APIs are matched at the end of whatever base path a CLI puts before them. */
function anyBase(path: string): string[] {
  return [path, `*${path}`];
}

const GEMINI_CALL = ":call{[^/:]+:(?:streamGenerateContent|generateContent|countTokens)}";
const MODEL_IDS = ["mock-model", "gpt-5.5", "gpt-4.1", "claude-sonnet-4-5", "gemini-2.5-flash"];

/** The mock model as a Hono app: OpenAI Responses and Chat Completions, Anthropic Messages, Gemini. */
export function createMockModelApp(options: MockModelOptions): Hono<Env> {
  // Not strict: a trailing slash (`/v1/models/`) is the same route.
  const app = new Hono<Env>({ strict: false });
  const log = (exchange: Exchange) => {
    if (exchange.logged) return;
    exchange.logged = true;
    if (options.logFile) appendFileSync(options.logFile, `${JSON.stringify(exchange.entry)}\n`);
    options.onRequest?.(exchange.entry);
  };
  app.use(async (c, next) => {
    const url = new URL(c.req.url);
    const exchange: Exchange = {
      entry: {
        at: new Date().toISOString(),
        method: c.req.method,
        url: url.pathname + url.search,
        status: 200,
        key: keyOf(c.req.header(), url.searchParams.get("key")),
      },
      logged: false,
    };
    c.set("exchange", exchange);
    await next();
    exchange.entry.status = c.res.status;
    log(exchange);
  });
  app.use(
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: (c) => c.json({ error: { message: "mock: the request body is too large" } }, 413),
    }),
  );

  const converse = (api: "responses" | "chat" | "anthropic" | "gemini") => async (c: Context<Env>) => {
    const exchange = c.get("exchange");
    const raw = await c.req.text();
    let body: Json;
    try {
      body = asRecord(JSON.parse(raw));
    } catch {
      return c.json({ error: { message: "mock: the request body is not JSON" } }, 400);
    }
    if (options.logBodies) exchange.entry.body = body;
    const call = api === "gemini" ? geminiCall(c.req.param("call") ?? "", c.req.query("alt")) : undefined;
    const conversation = parse(api, body, raw, call);
    const decided = decide(options.scenario, conversation);
    Object.assign(exchange.entry, {
      api: conversation.api,
      model: conversation.model,
      tools: conversation.tools.map((t) => (t.namespace ? `${t.namespace}/${t.name}` : t.name)),
      step: decided.step,
      history: conversation.calls.length,
      decision: describe(decided),
    });
    if (decided.delayMs > 0) await new Promise((done) => setTimeout(done, decided.delayMs));
    const { decision } = decided;
    if (decision.kind === "hang") {
      // No answer, not even headers, until the client gives up or the server closes.
      log(exchange);
      await new Promise((done) => c.req.raw.signal.addEventListener("abort", done, { once: true }));
      return c.body(null, 499 as ContentfulStatusCode);
    }
    if (decision.kind === "error") {
      const headers = decision.retryAfter === undefined ? {} : { "retry-after": String(decision.retryAfter) };
      return send(c, fail(conversation.api, decision.status, decision.message, headers));
    }
    return send(c, answer(conversation, decision, call?.sse ?? false));
  };

  app.on("POST", anyBase("/responses"), converse("responses"));
  app.on("POST", anyBase("/chat/completions"), converse("chat"));
  app.on("POST", anyBase("/messages/count_tokens"), async (c) => {
    c.get("exchange").entry.api = "side";
    return c.json({ input_tokens: countTokens(await c.req.text()) });
  });
  app.on("POST", anyBase("/messages"), converse("anthropic"));
  app.on("POST", anyBase(`/models/${GEMINI_CALL}`), async (c) => {
    if (!(c.req.param("call") ?? "").endsWith(":countTokens")) return converse("gemini")(c);
    c.get("exchange").entry.api = "side";
    return c.json({ totalTokens: countTokens(await c.req.text()) });
  });
  // GET routes answer HEAD too.
  app.on("GET", anyBase("/models"), (c) => {
    c.get("exchange").entry.api = "side";
    return c.json(modelList());
  });
  app.on("GET", ["/", ...anyBase("/api/hello")], (c) => {
    c.get("exchange").entry.api = "side";
    return c.json({ ok: true, server: "caesar mock-model" });
  });
  app.notFound((c) =>
    c.json({ error: { message: `mock: no route for ${c.req.method} ${c.req.path}` } }, 404),
  );
  app.onError((error, c) => c.json({ error: { message: `mock: ${String(error)}` } }, 500));
  return app;
}

/** `models/<model>:<method>`, and whether the client asked for server-sent events (`alt=sse`). */
function geminiCall(call: string, alt: string | undefined): { model: string; stream: boolean; sse: boolean } {
  const at = call.lastIndexOf(":");
  return {
    model: call.slice(0, at),
    stream: call.slice(at + 1) === "streamGenerateContent",
    sse: alt === "sse",
  };
}

function parse(
  api: "responses" | "chat" | "anthropic" | "gemini",
  body: Json,
  raw: string,
  gemini?: { model: string; stream: boolean },
): Conversation {
  switch (api) {
    case "responses":
      return parseResponsesRequest(body, raw);
    case "chat":
      return parseChatRequest(body, raw);
    case "anthropic":
      return parseMessagesRequest(body, raw);
    case "gemini":
      return parseGeminiRequest(body, raw, gemini?.model ?? "mock-model", gemini?.stream ?? false);
  }
}

function answer(conversation: Conversation, decision: Decided["decision"], sse: boolean): Answer {
  switch (conversation.api) {
    case "gemini":
      return answerGemini(conversation, decision, sse);
    case "responses":
      return answerResponses(conversation, decision);
    case "chat":
      return answerChat(conversation, decision);
    default:
      return answerMessages(conversation, decision);
  }
}

function fail(api: WireApi, status: number, message: string, headers: Json): Answer {
  if (api === "anthropic") return failMessages(status, message, headers);
  if (api === "gemini") return failGemini(status, message, headers);
  if (api === "chat") return failChat(status, message, headers);
  return failResponses(status, message, headers);
}

/** One JSON body, or the events of a stream through Hono's SSE helper. */
function send(c: Context<Env>, answer: Answer): Response | Promise<Response> {
  if (answer.kind === "json")
    return c.json(answer.body, answer.status as ContentfulStatusCode, answer.headers);
  return streamSSE(c, async (stream) => {
    for (const event of answer.events) await stream.writeSSE(event);
  });
}

/** One listing that satisfies the OpenAI, Anthropic and Gemini clients alike. */
function modelList(): Json {
  const created = Math.floor(Date.now() / 1000);
  return {
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
  };
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
