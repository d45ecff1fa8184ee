import { randomBytes } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";
import { bearerAuth } from "hono/bearer-auth";
import { getCookie } from "hono/cookie";
import { csrf } from "hono/csrf";
import { HTTPException } from "hono/http-exception";
import { RequestParameter } from "../../support/request-strings.js";
import type { ApiContext } from "../api-context.js";
import { ApiError } from "../api-error.js";
import { renderError } from "../error-response.js";
import { OPERATOR_HEADER, OPERATOR_HEADER_VALUE } from "../protocol-ids.js";
import { isLoopbackAddress, isOwnOrigin, isSameOrigin, isServedHostHeader } from "../security/access.js";
import { CSRF_HEADER, LoginSessions, sessionCookieName } from "../security/sessions.js";
import { tokenMatches } from "../security/token.js";

/** What @hono/node-server passes as `c.env`: the Node request (tests pass the same shape to app.request). */
export interface NodeBindings {
  incoming?: { socket?: { remoteAddress?: string | undefined } };
}

/** How a request proved who sent it: the bearer token, or a dashboard session (cookie + CSRF secret). */
export type Authentication = "bearer" | "session";

export type ApiEnv = {
  Bindings: NodeBindings;
  Variables: { local: boolean; authentication: Authentication | undefined };
};

export function peerAddress(c: Context<ApiEnv>): string | undefined {
  return c.env?.incoming?.socket?.remoteAddress;
}

const LOGIN_HINT =
  "open the one-time login URL `caesar serve` printed (run `caesar serve login` in the workspace for a new one)";

/**
 * Every request: its `Host` must name an address this server is served at (else it is a DNS-rebinding page
 * and is refused), every query parameter must be one printable line, and a non-loopback peer (only
 * possible with `--host`) must be authenticated for all of /api.
 */
export function accessGuard(ctx: ApiContext): MiddlewareHandler<ApiEnv> {
  const authenticate = requireAuthentication(ctx, { mutation: false });
  return async (c, next) => {
    const local = isLoopbackAddress(peerAddress(c));
    c.set("local", local);
    if (!isServedHostHeader(c.req.header("host"), ctx.access)) {
      throw new ApiError(
        "host_not_allowed",
        `Host ${JSON.stringify(c.req.header("host") ?? "")} is not an address this server is served at.`,
        `Address the server as http://127.0.0.1:${ctx.access.port}/ (or localhost${local ? "" : ", or the --host it was started with"}). Other names are refused as DNS rebinding.`,
      );
    }
    checkQueryParameters(c);
    if (!local && c.req.path.startsWith("/api/")) return authenticate(c, next);
    await next();
  };
}

/**
 * Query parameters are request strings too (`?after=`, `?code=`, and any a client adds): one printable line
 * each, names included, checked here once for every route — before any route reads them.
 */
function checkQueryParameters(c: Context<ApiEnv>): void {
  for (const [name, value] of new URL(c.req.url).searchParams) {
    for (const [what, text] of [
      ["name", name],
      ["value", value],
    ] as const) {
      const parsed = RequestParameter.safeParse(text);
      if (parsed.success) continue;
      const shown = JSON.stringify(name.slice(0, 64));
      const message = parsed.error.issues[0]?.message ?? "invalid";
      throw new ApiError(
        "invalid_argument",
        `Invalid query parameter ${shown} (its ${what}): ${message}.`,
        "Query parameters are single lines of printable text.",
        [{ path: `query.${name.slice(0, 64)}`, message }],
      );
    }
  }
}

/** POST needs the local operator header: an origin safeguard (browsers cannot add it cross-origin), not authentication. */
export const requireOperatorHeader: MiddlewareHandler<ApiEnv> = async (c, next) => {
  if (c.req.header(OPERATOR_HEADER) !== OPERATOR_HEADER_VALUE) {
    throw new ApiError(
      "operator_header_required",
      `POST requests need the header ${OPERATOR_HEADER}: ${OPERATOR_HEADER_VALUE}.`,
      "It is an origin safeguard of the local operator, not authentication: add it to the request.",
    );
  }
  await next();
};

/** Mutations refuse what a browser marks as coming from another site. */
export const requireSameOrigin: MiddlewareHandler<ApiEnv> = async (c, next) => {
  if (!isSameOrigin(c.req.raw.headers)) throw crossOrigin(c);
  await next();
};

/**
 * Hono's CSRF middleware refuses the requests a page of another site can send without a preflight (HTML
 * forms: urlencoded, multipart, text/plain) unless they come from this server's own origin. The mutation
 * endpoints accept only JSON, which that middleware leaves alone — the session check below covers JSON.
 */
export function refuseCrossSiteForms(): MiddlewareHandler<ApiEnv> {
  const guard = csrf({ origin: (origin, c) => isOwnOrigin(origin, c.req.raw.headers) });
  return async (c, next) => {
    try {
      await guard(c, async () => undefined);
    } catch (error) {
      if (error instanceof HTTPException) {
        throw new ApiError(
          "cross_origin",
          "A form-type request (urlencoded, multipart or text/plain) may not mutate the workspace unless it comes from this server's own page.",
          "HTML forms of other sites can send those without asking. Send JSON (Content-Type: application/json).",
        );
      }
      throw error;
    }
    await next();
  };
}

function crossOrigin(c: Context<ApiEnv>): ApiError {
  return new ApiError(
    "cross_origin",
    "Cross-origin requests may not mutate the workspace.",
    `Origin ${JSON.stringify(c.req.header("origin") ?? "")}, Sec-Fetch-Site ${JSON.stringify(c.req.header("sec-fetch-site") ?? "")}: use the dashboard served by this server, or a program (which sends neither header).`,
  );
}

/**
 * The token a request must present: the workspace's file as it is now (a rotation takes effect at once),
 * or the server's --token. A file that cannot be read matches nothing (fail closed).
 */
export async function currentTokenOf(ctx: ApiContext): Promise<string> {
  if (!ctx.access.currentToken) return ctx.access.token;
  return ctx.access.currentToken().catch(() => randomBytes(32).toString("hex"));
}

/**
 * Who may act: the holder of the bearer token (`Authorization: Bearer`, checked by Hono's bearer-auth
 * middleware — the CLI and scripts), or a dashboard session of this run of the server (its HttpOnly
 * cookie). A mutation by session must also come from this server's own origin (`Origin` present and
 * matching) and carry the session's CSRF secret in `X-Caesar-CSRF`: the cookie alone proves nothing, since a
 * browser sends it to every port of the host.
 */
export function requireAuthentication(
  ctx: ApiContext,
  { mutation }: { mutation: boolean },
): MiddlewareHandler<ApiEnv> {
  const refuse = (error: ApiError) => (c: Context) => renderError(c, ctx, error);
  const bearer: MiddlewareHandler<ApiEnv> = bearerAuth({
    realm: "caesar",
    verifyToken: async (token) => tokenMatches(token, await currentTokenOf(ctx)),
    noAuthenticationHeader: {
      message: refuse(
        new ApiError(
          "authentication_required",
          "This request needs the workspace's bearer token or a dashboard session.",
          `Programs: send Authorization: Bearer <token>, the token being in .caesar/state/serve/token (or the server's --token). The dashboard: ${LOGIN_HINT}.`,
        ),
      ),
    },
    invalidAuthenticationHeader: {
      message: refuse(
        new ApiError(
          "invalid_authorization",
          "The Authorization header is not `Bearer <token>`.",
          "Send Authorization: Bearer <token>.",
        ),
      ),
    },
    invalidToken: {
      message: refuse(
        new ApiError(
          "invalid_token",
          "The bearer token is not this server's.",
          "Read it again from .caesar/state/serve/token (or use the server's --token).",
        ),
      ),
    },
  }) as MiddlewareHandler;
  return async (c, next) => {
    const cookie = getCookie(c, sessionCookieName(ctx.access.port));
    if (c.req.header("authorization") !== undefined || cookie === undefined) {
      return bearer(c, async () => {
        c.set("authentication", "bearer");
        await next();
      });
    }
    const session = ctx.sessions.find(cookie);
    if (!session) {
      throw new ApiError(
        "session_unknown",
        "This dashboard session is not one of this server's (it was restarted, or the session ended).",
        `Log in again: ${LOGIN_HINT}.`,
        undefined,
        { "WWW-Authenticate": 'Bearer realm="caesar"' },
      );
    }
    if (mutation) {
      if (!isOwnOrigin(c.req.header("origin"), c.req.raw.headers)) {
        throw new ApiError(
          "origin_required",
          "A mutation by dashboard session must carry this server's own Origin.",
          `Origin ${JSON.stringify(c.req.header("origin") ?? "")} is not http://${c.req.header("host") ?? ""}: only the dashboard this server serves may act with its session.`,
        );
      }
      if (!LoginSessions.csrfMatches(session, c.req.header(CSRF_HEADER))) {
        throw new ApiError(
          "csrf_required",
          `A mutation by dashboard session needs the session's CSRF secret in ${CSRF_HEADER}.`,
          `The page receives it when it logs in; if it lost it, log in again: ${LOGIN_HINT}.`,
        );
      }
    }
    c.set("authentication", "session");
    await next();
  };
}
