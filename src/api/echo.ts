import { AGENT_PROTOCOL } from "./protocol-ids.js";

/** Error bodies echo what identifies the request (a valid requestId only) and the current run and revision. */
export class EchoedError extends Error {
  constructor(
    readonly inner: unknown,
    readonly echo: { protocol: string; requestId: string | null },
  ) {
    super("echoed");
  }
}

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function withEcho(error: unknown, raw: unknown, protocol = AGENT_PROTOCOL): EchoedError {
  const requestId =
    raw &&
    typeof raw === "object" &&
    "requestId" in raw &&
    typeof raw.requestId === "string" &&
    UUID_SHAPE.test(raw.requestId)
      ? raw.requestId
      : null;
  return new EchoedError(error, { protocol, requestId });
}
