import type { ServerResponse } from "node:http";

/** A JSON value read defensively: requests come from agent CLIs we do not control. */
export type Json = Record<string, unknown>;

export function asRecord(value: unknown): Json {
  return value && typeof value === "object" && !Array.isArray(value) ? (value as Json) : {};
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function asString(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Json = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...(headers as Record<string, string>),
  });
  res.end(text);
}

/** Server-sent events: `event:` lines when named (OpenAI Responses, Anthropic), bare `data:` otherwise. */
export class SseWriter {
  constructor(private readonly res: ServerResponse) {
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
  }

  send(data: unknown, event?: string): void {
    const payload = typeof data === "string" ? data : JSON.stringify(data);
    this.res.write(`${event ? `event: ${event}\n` : ""}data: ${payload}\n\n`);
  }

  end(): void {
    this.res.end();
  }
}

/** Stable pieces of a fake response. */
export const MOCK_USAGE = { input: 20, output: 10 };

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** Split text in a few chunks, so clients exercise their delta handling. */
export function chunks(text: string, size = 24): string[] {
  if (text.length === 0) return [""];
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}
