// Talking to the local caesar server: JSON reads, the mutation vocabulary (cz-mutate/1, with this page's
// login session), and server-sent-event streams.
//
// A session is two halves: an HttpOnly cookie the browser sends by itself, and a CSRF secret the page sends
// in a header. The login hands the secret over in the URL fragment (never sent to any server); it is kept in
// this origin's localStorage — per port, unlike cookies, so a page of another server on this host cannot
// read it.

const OPERATOR = { "X-Commit-Zero": "local-demo" };
const LOGIN_FRAGMENT = "#login=";
const CSRF_KEY = "caesar-csrf";

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

/**
 * Just logged in (the server redirected to `/#login=<secret>`): keep the secret, and take it out of the
 * address bar and the history entry. Call before routing.
 */
export function adoptLogin() {
  if (!location.hash.startsWith(LOGIN_FRAGMENT)) return;
  localStorage.setItem(CSRF_KEY, location.hash.slice(LOGIN_FRAGMENT.length));
  history.replaceState(null, "", `${location.pathname}#/`);
}

/** Whether this page may act: `{ authenticated, csrfHeader, login, mutate }` from the server. */
export async function getSession() {
  const session = await getJson("/api/session");
  if (!session.authenticated) localStorage.removeItem(CSRF_KEY);
  return session;
}

const MUTATE_PATH = "/api/mutate/v1/request";

/**
 * Send one mutation, based on the revision the user was looking at. A 409 (stale) is returned to the
 * caller as an error to show — never retried here. The browser adds the session cookie and the Origin.
 */
export async function mutate(operation, args, basis) {
  const response = await fetch(MUTATE_PATH, {
    method: "POST",
    headers: {
      ...OPERATOR,
      "Content-Type": "application/json",
      "X-Caesar-CSRF": localStorage.getItem(CSRF_KEY) ?? "",
    },
    body: JSON.stringify({
      protocol: "cz-mutate/1",
      requestId: crypto.randomUUID(),
      runId: basis.runId,
      revision: basis.revision,
      operation,
      arguments: args,
    }),
  });
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    if (response.status === 401) document.dispatchEvent(new CustomEvent("caesar:logged-out"));
    throw new ApiError(response.status, body);
  }
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
