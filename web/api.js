// Talking to the local caesar server: JSON reads, the mutation vocabulary (cz-mutate/1, bearer token from
// /api/session — kept in memory only), and server-sent-event streams.

const OPERATOR = { "X-Commit-Zero": "local-demo" };

export class ApiError extends Error {
  constructor(status, body) {
    const error = body?.error ?? {};
    super(error.summary ?? `HTTP ${status}`);
    this.status = status;
    this.code = error.code ?? "http_error";
    this.detail = error.detail ?? "";
  }
}

export async function getJson(path) {
  const response = await fetch(path, { headers: { Accept: "application/json" } });
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, body);
  return body;
}

let session;

/** The mutation token, from the server that served this page (same origin, this machine). */
async function getSession() {
  session ??= getJson("/api/session").catch((error) => {
    session = undefined;
    throw error;
  });
  return session;
}

/**
 * Send one mutation, based on the revision the user was looking at. A 409 (stale) is returned to the
 * caller as an error to show — never retried here.
 */
export async function mutate(operation, args, basis) {
  const { token, mutate: endpoint } = await getSession();
  const response = await fetch(endpoint.path, {
    method: "POST",
    headers: { ...OPERATOR, "Content-Type": "application/json", Authorization: `Bearer ${token}` },
    body: JSON.stringify({
      protocol: endpoint.protocol,
      requestId: crypto.randomUUID(),
      runId: basis.runId,
      revision: basis.revision,
      operation,
      arguments: args,
    }),
  });
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, body);
  return body;
}

/**
 * Follow a server-sent-event stream. EventSource reconnects on its own and sends Last-Event-ID, so the
 * server resumes after the last event this page saw. Returns a function that closes the stream.
 */
export function follow(path, handlers, onStatus) {
  const source = new EventSource(path);
  for (const [event, handler] of Object.entries(handlers)) {
    source.addEventListener(event, (message) => {
      let data;
      try {
        data = JSON.parse(message.data);
      } catch {
        return;
      }
      handler(data, message);
    });
  }
  source.addEventListener("open", () => onStatus?.("live"));
  source.addEventListener("error", () =>
    onStatus?.(source.readyState === EventSource.CLOSED ? "closed" : "reconnecting"),
  );
  return () => source.close();
}
