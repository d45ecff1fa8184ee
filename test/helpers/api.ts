import { randomUUID } from "node:crypto";
import type { ApiContext } from "../../src/api/api-context.js";
import { createApp } from "../../src/api/app.js";
import { makeApiContext } from "../../src/api/server.js";

export const PORT = 4999;
export const HOST = `127.0.0.1:${PORT}`;
export const TOKEN = "t".repeat(40);

/** A dashboard session as a browser holds it: the cookie (name=value) and the CSRF secret of the page. */
export interface BrowserSession {
  cookie: string;
  csrf: string;
}

export interface InProcessApi {
  ctx: ApiContext;
  /** Log in as the dashboard does: spend a one-time code (minted as `caesar serve` mints them). */
  login(): Promise<BrowserSession>;
  /** A request as a local client sends it (loopback peer, Host of the server), headers overridable. */
  request(path: string, init?: RequestInit & { peer?: string }): Promise<Response>;
  /** GET /api/state. */
  state(): Promise<{ runId: string; version: number }>;
  /** POST a query envelope (operator header included) based on the current state unless given. */
  query(operation: string, args: unknown, basis?: { runId: string; revision: number }): Promise<Response>;
  /** POST a mutation envelope with the token, based on the current state unless given. */
  mutate(
    operation: string,
    args: unknown,
    basis?: { runId: string; revision: number; requestId?: string },
  ): Promise<Response>;
  close(): void;
}

/** The server's app over a workspace, in process (Hono's app.request): no socket, the real routes. */
export async function openApi(
  root: string,
  { host = "127.0.0.1" }: { host?: string } = {},
): Promise<InProcessApi> {
  const ctx = await makeApiContext({ root, version: "test", port: PORT, host, token: TOKEN });
  const app = createApp(ctx);
  const request = (path: string, init: RequestInit & { peer?: string } = {}) => {
    const headers = new Headers(init.headers);
    if (!headers.has("host")) headers.set("host", HOST);
    return Promise.resolve(
      app.request(
        `http://${HOST}${path}`,
        { ...init, headers },
        { incoming: { socket: { remoteAddress: init.peer ?? "127.0.0.1" } } },
      ),
    );
  };
  const state = async () =>
    (await (await request("/api/state")).json()) as { runId: string; version: number };
  const post = (path: string, body: unknown, headers: Record<string, string>) =>
    request(path, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Commit-Zero": "local-demo", ...headers },
      body: JSON.stringify(body),
    });
  return {
    ctx,
    request,
    state,
    async login() {
      const response = await request(`/login?code=${ctx.sessions.mintCode()}`);
      const cookie = /^([^;]+)/.exec(response.headers.get("set-cookie") ?? "")?.[1];
      const csrf = /#login=(.+)$/.exec(response.headers.get("location") ?? "")?.[1];
      if (response.status !== 303 || !cookie || !csrf) throw new Error(`login failed: ${response.status}`);
      return { cookie, csrf };
    },
    async query(operation, args, basis) {
      const current = basis ?? (await state().then((s) => ({ runId: s.runId, revision: s.version })));
      return post(
        "/api/agent/v1/query",
        { protocol: "cz-agent/1", requestId: randomUUID(), ...current, operation, arguments: args },
        {},
      );
    },
    async mutate(operation, args, basis) {
      const current = basis ?? (await state().then((s) => ({ runId: s.runId, revision: s.version })));
      const { requestId = randomUUID(), ...rest } = current as {
        runId: string;
        revision: number;
        requestId?: string;
      };
      return post(
        "/api/mutate/v1/request",
        { protocol: "cz-mutate/1", requestId, ...rest, operation, arguments: args },
        { Authorization: `Bearer ${TOKEN}` },
      );
    },
    close: () => ctx.index.close(),
  };
}
