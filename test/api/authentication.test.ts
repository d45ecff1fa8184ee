import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BrowserSession, type InProcessApi, openApi, PORT, TOKEN } from "../helpers/api.js";
import { git, makeRepo, writeConfig } from "../helpers/repo.js";

/**
 * Who may act on the workspace through `caesar serve`, in process: the bearer token's holder, or a dashboard
 * session obtained with a one-time login link — and nothing else. No endpoint hands out the token.
 */

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
type Json = any;

const ORIGIN = `http://127.0.0.1:${PORT}`;
let root: string;
let api: InProcessApi;

beforeAll(async () => {
  root = makeRepo({ "README.md": "# auth\n" });
  writeConfig(root, "", ["hang"]);
  git(root, "add", ".");
  git(root, "commit", "-qm", "config");
  api = await openApi(root);
});

afterAll(() => api?.close());

async function envelope(operation = "task.cancel", args: unknown = { task_id: "t_00000000" }) {
  const state = await api.state();
  return JSON.stringify({
    protocol: "cz-mutate/1",
    requestId: randomUUID(),
    runId: state.runId,
    revision: state.version,
    operation,
    arguments: args,
  });
}

/** POST a mutation as a browser page with this session would (cookie, Origin, CSRF header), overridable. */
async function mutateAsPage(session: BrowserSession, headers: Record<string, string | undefined> = {}) {
  const all: Record<string, string | undefined> = {
    "Content-Type": "application/json",
    "X-Commit-Zero": "local-demo",
    Cookie: session.cookie,
    Origin: ORIGIN,
    "Sec-Fetch-Site": "same-origin",
    "X-Caesar-CSRF": session.csrf,
    ...headers,
  };
  const defined = Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined)) as Record<
    string,
    string
  >;
  return api.request("/api/mutate/v1/request", { method: "POST", headers: defined, body: await envelope() });
}

async function code(response: Response): Promise<string> {
  return ((await response.json()) as Json).error.code;
}

describe("no endpoint hands out the token", () => {
  it("no GET answer carries it, whatever the headers", async () => {
    const session = await api.login();
    const paths = [
      "/",
      "/api/agent/v1",
      "/api/agent/v1/schema",
      "/api/state",
      "/api/mutate/v1",
      "/api/mutate/v1/schema",
      "/api/commons/protocol",
      "/api/session",
      "/api/tasks",
      "/login",
      "/login?code=x",
      "/api/token",
      "/api/serve-token",
    ];
    for (const path of paths) {
      const variants: Record<string, string>[] = [
        {},
        { "Sec-Fetch-Site": "same-origin" },
        { Cookie: session.cookie },
      ];
      for (const headers of variants) {
        const response = await api.request(path, { headers });
        const text = await response.text();
        expect(text, path).not.toContain(TOKEN);
        expect(JSON.stringify([...response.headers]), path).not.toContain(TOKEN);
      }
    }
  });

  it("GET /api/session says whether the page is logged in — never a secret", async () => {
    const anonymous = (await (await api.request("/api/session")).json()) as Json;
    expect(anonymous).toMatchObject({ authenticated: false, csrfHeader: "X-Caesar-CSRF" });
    expect(anonymous.login).toContain("caesar serve login");
    const session = await api.login();
    const page = (await (
      await api.request("/api/session", { headers: { Cookie: session.cookie } })
    ).json()) as Json;
    expect(page.authenticated).toBe(true);
    expect(JSON.stringify(page)).not.toContain(session.csrf);
    expect(JSON.stringify(page)).not.toContain(session.cookie.split("=")[1]);
  });
});

describe("logging in with a one-time link", () => {
  it("trades the code for an HttpOnly, SameSite=Strict cookie named after the port, and the CSRF secret in the fragment", async () => {
    const response = await api.request(`/login?code=${api.ctx.sessions.mintCode()}`);
    expect(response.status).toBe(303);
    const cookie = response.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(new RegExp(`^caesar_session_${PORT}=[A-Za-z0-9_-]{43}; `));
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Strict");
    expect(cookie).toContain("Path=/");
    expect(cookie).not.toMatch(/Max-Age|Expires/i); // ends with the browser session, and with this run anyway
    expect(response.headers.get("location")).toMatch(/^\/#login=[A-Za-z0-9_-]{43}$/);
    expect(response.headers.get("cache-control")).toBe("no-store");
  });

  it("a code works once; an unknown, malformed or missing code gets no cookie", async () => {
    const once = api.ctx.sessions.mintCode();
    expect((await api.request(`/login?code=${once}`)).status).toBe(303);
    for (const path of [
      `/login?code=${once}`,
      `/login?code=${"A".repeat(43)}`,
      "/login?code=short",
      "/login",
      `/login?code=${once}%00`,
    ]) {
      const response = await api.request(path);
      expect(response.status, path).toBeGreaterThanOrEqual(400);
      expect(response.headers.get("set-cookie"), path).toBeNull();
    }
    const used = await api.request(`/login?code=${once}`);
    expect(await code(used)).toBe("login_code_invalid");
  });

  it("a session of another run of the server is unknown here (401)", async () => {
    const other = await openApi(root);
    try {
      const foreign = await other.login();
      const response = await mutateAsPage(foreign);
      expect(response.status).toBe(401);
      expect(await code(response)).toBe("session_unknown");
    } finally {
      other.close();
    }
  });
});

describe("a mutation by dashboard session", () => {
  let session: BrowserSession;
  beforeAll(async () => {
    session = await api.login();
  });

  it("with its cookie, this server's Origin and the CSRF secret, it reaches the engine", async () => {
    const response = await mutateAsPage(session);
    expect(response.status).toBe(404); // t_00000000 does not exist: past every guard
    expect(await code(response)).toBe("task_not_found");
  });

  it("without an Origin, or with another one, it is refused (403)", async () => {
    const none = await mutateAsPage(session, { Origin: undefined });
    expect(none.status).toBe(403);
    expect(await code(none)).toBe("origin_required");
    const otherPort = await mutateAsPage(session, {
      Origin: "http://127.0.0.1:1",
      "Sec-Fetch-Site": "same-site",
    });
    expect(otherPort.status).toBe(403);
    const evil = await mutateAsPage(session, {
      Origin: "http://evil.example",
      "Sec-Fetch-Site": "cross-site",
    });
    expect(evil.status).toBe(403);
    expect(await code(evil)).toBe("cross_origin");
  });

  it("without the CSRF secret, or with a wrong one, it is refused (403): the cookie alone proves nothing", async () => {
    const none = await mutateAsPage(session, { "X-Caesar-CSRF": undefined });
    expect(none.status).toBe(403);
    expect(await code(none)).toBe("csrf_required");
    const other = await api.login();
    const wrong = await mutateAsPage(session, { "X-Caesar-CSRF": other.csrf });
    expect(wrong.status).toBe(403);
    expect(await code(wrong)).toBe("csrf_required");
  });

  it("a forged cookie is 401", async () => {
    const forged = await mutateAsPage({
      cookie: `caesar_session_${PORT}=${"B".repeat(43)}`,
      csrf: session.csrf,
    });
    expect(forged.status).toBe(401);
    expect(await code(forged)).toBe("session_unknown");
  });

  it("a cross-site form POST carrying the cookie is refused before anything reads it", async () => {
    for (const type of [
      "application/x-www-form-urlencoded",
      "text/plain",
      "multipart/form-data; boundary=x",
    ]) {
      const response = await api.request("/api/mutate/v1/request", {
        method: "POST",
        headers: {
          "Content-Type": type,
          Cookie: session.cookie,
          Origin: "http://evil.example",
          "Sec-Fetch-Site": "cross-site",
          "X-Commit-Zero": "local-demo",
        },
        body: await envelope(),
      });
      expect(response.status, type).toBe(403);
      expect(await code(response), type).toBe("cross_origin");
    }
  });
});

describe("bearer token", () => {
  const post = (authorization: string | undefined) =>
    envelope().then((body) =>
      api.request("/api/mutate/v1/request", {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "X-Commit-Zero": "local-demo",
          ...(authorization === undefined ? {} : { Authorization: authorization }),
        },
        body,
      }),
    );

  it("is checked by Hono's bearer-auth: right, wrong, malformed, absent", async () => {
    expect((await post(`Bearer ${TOKEN}`)).status).toBe(404);
    const wrong = await post(`Bearer ${"x".repeat(40)}`);
    expect([wrong.status, await code(wrong)]).toEqual([401, "invalid_token"]);
    expect(wrong.headers.get("www-authenticate")).toContain('error="invalid_token"');
    const basic = await post("Basic dXNlcjpwdw==");
    expect([basic.status, await code(basic)]).toEqual([400, "invalid_authorization"]);
    const absent = await post(undefined);
    expect([absent.status, await code(absent)]).toEqual([401, "authentication_required"]);
    expect(absent.headers.get("www-authenticate")).toBe('Bearer realm="caesar"');
    // Every error has the API's one shape, even when Hono's middleware raised it.
    const body = (await (await post("Bearer nope")).json()) as Json;
    expect(Object.keys(body)).toEqual(["runId", "revision", "error"]);
  });

  it("mints login links; a session or nothing may not", async () => {
    const mint = (headers: Record<string, string>) =>
      api.request("/api/login-links", {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Commit-Zero": "local-demo", ...headers },
        body: "{}",
      });
    const minted = (await (await mint({ Authorization: `Bearer ${TOKEN}` })).json()) as Json;
    expect(minted.url).toMatch(new RegExp(`^${ORIGIN}/login\\?code=[A-Za-z0-9_-]{43}$`));
    const path = new URL(minted.url).pathname + new URL(minted.url).search;
    expect((await api.request(path)).status).toBe(303);
    expect((await api.request(path)).status).toBe(403);
    const session = await api.login();
    const bySession = await mint({ Cookie: session.cookie, Origin: ORIGIN, "X-Caesar-CSRF": session.csrf });
    expect([bySession.status, await code(bySession)]).toEqual([403, "bearer_required"]);
    expect((await mint({})).status).toBe(401);
  });
});

describe("the Host header", () => {
  it("must name an address the server is served at: a rebinding name is refused, even with the token", async () => {
    for (const host of [
      "evil.example",
      `evil.example:${PORT}`,
      "127.0.0.1:1",
      "127.0.0.1",
      "127.0.0.1.evil.example",
    ]) {
      const response = await api.request("/api/state", { headers: { host } });
      expect(response.status, host).toBe(403);
      expect(await code(response), host).toBe("host_not_allowed");
    }
    const login = await api.request(`/login?code=${api.ctx.sessions.mintCode()}`, {
      headers: { host: `evil.example:${PORT}` },
    });
    expect(login.status).toBe(403);
    expect(login.headers.get("set-cookie")).toBeNull();
    const mutation = await api.request("/api/mutate/v1/request", {
      method: "POST",
      headers: {
        host: `evil.example:${PORT}`,
        "Content-Type": "application/json",
        "X-Commit-Zero": "local-demo",
        Authorization: `Bearer ${TOKEN}`,
      },
      body: await envelope(),
    });
    expect(mutation.status).toBe(403);
    for (const host of [`localhost:${PORT}`, `LOCALHOST:${PORT}`, `[::1]:${PORT}`, `127.0.0.1:${PORT}`]) {
      expect((await api.request("/api/state", { headers: { host } })).status, host).toBe(200);
    }
  });

  it("the configured --host is served too; with a wildcard, this machine's own names", async () => {
    const named = await openApi(root, { host: "caesar.example" });
    const wildcard = await openApi(root, { host: "0.0.0.0" });
    try {
      const get = (on: InProcessApi, host: string) =>
        on.request("/api/state", { peer: "192.0.2.7", headers: { host, Authorization: `Bearer ${TOKEN}` } });
      expect((await get(named, `caesar.example:${PORT}`)).status).toBe(200);
      expect((await get(named, `evil.example:${PORT}`)).status).toBe(403);
      expect((await get(wildcard, `${hostname()}:${PORT}`)).status).toBe(200);
      expect((await get(wildcard, `evil.example:${PORT}`)).status).toBe(403);
    } finally {
      named.close();
      wildcard.close();
    }
  });
});

describe("another machine (only with --host and --token)", () => {
  it("needs the token or a session for every /api request, reads included", async () => {
    const exposed = await openApi(root, { host: "caesar.example" });
    try {
      const headers = { host: `caesar.example:${PORT}` };
      const read = (extra: Record<string, string> = {}) =>
        exposed.request("/api/state", { peer: "192.0.2.7", headers: { ...headers, ...extra } });
      expect((await read()).status).toBe(401);
      expect((await read({ Authorization: `Bearer ${TOKEN}` })).status).toBe(200);
      const login = await exposed.request(`/login?code=${exposed.ctx.sessions.mintCode()}`, {
        peer: "192.0.2.7",
        headers,
      });
      const cookie = /^([^;]+)/.exec(login.headers.get("set-cookie") ?? "")![1]!;
      expect((await read({ Cookie: cookie })).status).toBe(200);
      // The dashboard's static files carry no data and need nothing.
      expect((await exposed.request("/", { peer: "192.0.2.7", headers })).status).toBe(200);
    } finally {
      exposed.close();
    }
  });
});
