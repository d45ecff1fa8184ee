// @ts-check
// Talking to the local caesar server: JSON reads, the mutation vocabulary (cz-mutate/1, with this page's
// login session), and server-sent-event streams. Every shape read or sent is the server's own zod schema
// (src/api/response-schema.ts, src/api/mutation-schema.ts), imported here as JSDoc types: `npm run
// typecheck` checks this page against them.
//
// A session is two halves: an HttpOnly cookie the browser sends by itself, and a CSRF secret the page sends
// in a header. The login hands the secret over in the URL fragment (never sent to any server); it is kept in
// this origin's localStorage — per port, unlike cookies, so a page of another server on this host cannot
// read it.

/** @typedef {import("../src/api/response-schema.js").AgentCapabilities} AgentCapabilities */
/** @typedef {import("../src/api/response-schema.js").ErrorResponse} ErrorResponse */
/** @typedef {import("../src/api/response-schema.js").MutationOperation} MutationOperation */
/** @typedef {import("../src/api/response-schema.js").Session} Session */
/** @typedef {import("../src/api/response-schema.js").StreamHello} StreamHello */
/** @typedef {import("../src/api/response-schema.js").TaskDiff} TaskDiff */
/** @typedef {import("../src/api/response-schema.js").TaskEventMessage} TaskEventMessage */
/** @typedef {import("../src/api/response-schema.js").TaskListPage} TaskListPage */
/** @typedef {import("../src/api/response-schema.js").TaskPage} TaskPage */
/** @typedef {import("../src/api/response-schema.js").TasksUpdate} TasksUpdate */
/**
 * @template {MutationOperation} O
 * @typedef {import("../src/api/response-schema.js").MutationResponseOf<O>} MutationResponseOf
 */
/** @typedef {import("zod").input<typeof import("../src/api/mutation-schema.js").MutationRequestSchema>} MutationRequest */
/**
 * The arguments of a mutation, as the request schema takes them.
 * @template {MutationOperation} O
 * @typedef {Extract<MutationRequest, { operation: O }>["arguments"]} MutationArguments
 */
/**
 * What a mutation is based on: the run and revision the user was looking at.
 * @typedef {{ runId: string, revision: number }} Basis
 */
/**
 * Where a stream stands, for the page's indicator.
 * @typedef {"connecting" | "live" | "reconnecting" | "closed"} StreamStatus
 */

const OPERATOR = { "X-Commit-Zero": "local-demo" };
const LOGIN_FRAGMENT = "#login=";
const CSRF_KEY = "caesar-csrf";

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {{ error?: Partial<ErrorResponse["error"]> } | null} body caesar's error body; null when the
   *   answer was not JSON (anything may stand between the page and the server)
   */
  constructor(status, body) {
    const error = body?.error ?? {};
    super(error.summary ?? `HTTP ${status}`);
    this.status = status;
    this.code = error.code ?? "http_error";
    this.detail = error.detail ?? "";
  }
}

/**
 * What went wrong, in words for the page: an ApiError's summary and detail, any other error's message.
 * @param {unknown} error
 */
export function errorText(error) {
  if (error instanceof ApiError) return `${error.message}${error.detail ? ` ${error.detail}` : ""}`;
  return error instanceof Error ? error.message : String(error);
}

/**
 * GET a JSON document; throws an ApiError for an answer that is not 2xx. The type parameter is the schema
 * the server answers `path` with: the typed readers below are the only callers.
 * @template T
 * @param {string} path
 * @returns {Promise<T>}
 */
async function getJson(path) {
  const response = await fetch(path, { headers: { Accept: "application/json" } });
  const body = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, body);
  return body;
}

/**
 * The newest tasks (`GET /api/tasks`).
 * @param {number} limit
 * @returns {Promise<TaskListPage>}
 */
export function getTaskList(limit) {
  return getJson(`/api/tasks?limit=${limit}`);
}

/**
 * One task described: summary, report, questions (`GET /api/tasks/:id`).
 * @param {string} id
 * @returns {Promise<TaskPage>}
 */
export function getTask(id) {
  return getJson(`/api/tasks/${encodeURIComponent(id)}`);
}

/**
 * A task's verified diff (`GET /api/tasks/:id/diff`).
 * @param {string} id
 * @returns {Promise<TaskDiff>}
 */
export function getTaskDiff(id) {
  return getJson(`/api/tasks/${encodeURIComponent(id)}/diff`);
}

/**
 * The query contract's capabilities (`GET /api/agent/v1`).
 * @returns {Promise<AgentCapabilities>}
 */
export function getCapabilities() {
  return getJson("/api/agent/v1");
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

/**
 * Whether this page may act: `{ authenticated, csrfHeader, login, mutate }` from the server.
 * @returns {Promise<Session>}
 */
export async function getSession() {
  /** @type {Session} */
  const session = await getJson("/api/session");
  if (!session.authenticated) localStorage.removeItem(CSRF_KEY);
  return session;
}

const MUTATE_PATH = "/api/mutate/v1/request";

/**
 * Send one mutation, based on the revision the user was looking at. A 409 (stale) is returned to the
 * caller as an error to show — never retried here. The browser adds the session cookie and the Origin.
 * @template {MutationOperation} O
 * @param {O} operation
 * @param {MutationArguments<O>} args
 * @param {Basis} basis
 * @returns {Promise<MutationResponseOf<O>>}
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
 * @template {Record<string, unknown>} M what each event's data is, by event name
 * @param {string} path
 * @param {{ [E in keyof M]: (data: M[E], message: MessageEvent<string>) => void }} handlers
 * @param {(state: StreamStatus) => void} onStatus
 * @returns {() => void}
 */
function follow(path, handlers, onStatus) {
  const source = new EventSource(path);
  for (const event of Object.keys(handlers)) {
    const handler = handlers[/** @type {keyof M} */ (event)];
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
  source.addEventListener("open", () => onStatus("live"));
  source.addEventListener("error", () =>
    onStatus(source.readyState === EventSource.CLOSED ? "closed" : "reconnecting"),
  );
  return () => source.close();
}

/**
 * The workspace's stream (`GET /api/stream`): `hello` on every (re)connection, then `tasks` updates.
 * @param {{ hello: (data: StreamHello) => void, tasks: (data: TasksUpdate) => void }} handlers
 * @param {(state: StreamStatus) => void} onStatus
 */
export function followWorkspace(handlers, onStatus) {
  return follow("/api/stream", handlers, onStatus);
}

/**
 * A task's stream (`GET /api/tasks/:id/events`): `hello`, then its events (`caesar`, SSE id = ordinal)
 * and its description (`task`) whenever it changes.
 * @param {string} id
 * @param {{ caesar: (data: TaskEventMessage, message: MessageEvent<string>) => void, task: (data: TaskPage) => void }} handlers
 * @param {(state: StreamStatus) => void} onStatus
 */
export function followTask(id, handlers, onStatus) {
  return follow(`/api/tasks/${encodeURIComponent(id)}/events`, handlers, onStatus);
}
