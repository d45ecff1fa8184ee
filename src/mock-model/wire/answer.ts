/**
 * What the wire modules share: reading request JSON defensively, and the answer each API gives — one JSON
 * body, or a stream of server-sent events — which the server (server.ts, on Hono) sends.
 */

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

/** One server-sent event: named (OpenAI Responses, Anthropic) or a bare `data:` line. */
export interface ServerSentEvent {
  event?: string;
  data: string;
}

export type Answer =
  | { kind: "json"; status: number; body: unknown; headers: Record<string, string> }
  | { kind: "events"; events: ServerSentEvent[] };

export function jsonAnswer(status: number, body: unknown, headers: Json = {}): Answer {
  return { kind: "json", status, body, headers: headers as Record<string, string> };
}

/** Collects the events of a streamed answer, in order. */
export class EventStream {
  private readonly events: ServerSentEvent[] = [];

  send(data: unknown, event?: string): void {
    this.events.push({
      ...(event ? { event } : {}),
      data: typeof data === "string" ? data : JSON.stringify(data),
    });
  }

  answer(): Answer {
    return { kind: "events", events: this.events };
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
