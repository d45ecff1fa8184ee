import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A span as an OTLP/HTTP JSON request carries it, its attributes flattened to plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  startMs: number;
  endMs: number;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  status: { code?: number; message?: string };
  resource: Record<string, unknown>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}
type OtlpAttribute = { key: string; value: OtlpValue };

function plainValue(value: OtlpValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(plainValue);
  return undefined;
}

function attributesOf(list: OtlpAttribute[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, plainValue(value)]));
}

/**
 * A collector for tests: an OTLP/HTTP receiver (JSON only) on a local port that keeps what it is sent.
 * `answer: false` makes it a collector that never answers (it reads the request and holds it).
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Requests posted (answered or not), with their content type. */
  readonly requests: { path: string; contentType: string }[] = [];
  private readonly held: ServerResponse[] = [];
  private readonly server: Server;

  constructor(private readonly answer = true) {
    this.server = createServer((request, response) => void this.handle(request, response));
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const response of this.held) response.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Wait until `done` holds of the spans received, or fail after `timeoutMs`. */
  async waitFor(done: (spans: ReceivedSpan[]) => boolean, timeoutMs = 20_000): Promise<ReceivedSpan[]> {
    const until = Date.now() + timeoutMs;
    while (!done(this.spans)) {
      if (Date.now() > until)
        throw new Error(
          `the collector did not receive what was awaited; it has: ${this.spans.map((s) => s.name).join(", ")}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return this.spans;
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    this.requests.push({ path: request.url ?? "", contentType: request.headers["content-type"] ?? "" });
    if (!this.answer) {
      this.held.push(response);
      return;
    }
    if (request.url !== "/v1/traces" || !String(request.headers["content-type"]).includes("json")) {
      response.writeHead(415).end();
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
      resourceSpans?: {
        resource?: { attributes?: OtlpAttribute[] };
        scopeSpans?: { spans?: Record<string, unknown>[] }[];
      }[];
    };
    for (const resourceSpans of body.resourceSpans ?? []) {
      const resource = attributesOf(resourceSpans.resource?.attributes);
      for (const scope of resourceSpans.scopeSpans ?? [])
        for (const span of scope.spans ?? [])
          this.spans.push({
            traceId: span.traceId as string,
            spanId: span.spanId as string,
            parentSpanId: (span.parentSpanId as string | undefined) ?? "",
            name: span.name as string,
            startMs: Number(BigInt(span.startTimeUnixNano as string) / 1_000_000n),
            endMs: Number(BigInt(span.endTimeUnixNano as string) / 1_000_000n),
            attributes: attributesOf(span.attributes as OtlpAttribute[]),
            events: ((span.events as { name: string; attributes?: OtlpAttribute[] }[] | undefined) ?? []).map(
              (event) => ({ name: event.name, attributes: attributesOf(event.attributes) }),
            ),
            status: (span.status as ReceivedSpan["status"]) ?? {},
            resource,
          });
    }
    response.writeHead(200, { "content-type": "application/json" }).end("{}");
  }
}
