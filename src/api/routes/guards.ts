import type { Context, MiddlewareHandler } from "hono";
import { ApiError } from "../api-error.js";
import { OPERATOR_HEADER, OPERATOR_HEADER_VALUE } from "../protocol-ids.js";
import { type AccessPolicy, isLocalHostHeader, isLoopbackAddress, isSameOrigin } from "../security/access.js";
import { tokenMatches } from "../security/token.js";

/** What @hono/node-server passes as `c.env`: the Node request (tests pass the same shape to app.request). */
export interface NodeBindings {
  incoming?: { socket?: { remoteAddress?: string | undefined } };
}

export type ApiEnv = { Bindings: NodeBindings; Variables: { local: boolean } };

export function peerAddress(c: Context<ApiEnv>): string | undefined {
  return c.env?.incoming?.socket?.remoteAddress;
}

/**
 * Every request: a loopback peer must address the server by a loopback name (else it is a DNS-rebinding
 * page and is refused); a non-loopback peer (only possible with `--host`) needs the token for all of /api.
 */
export function accessGuard(policy: AccessPolicy): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    const local = isLoopbackAddress(peerAddress(c));
    c.set("local", local);
    if (local && !isLocalHostHeader(c.req.header("host"), policy)) {
      throw new ApiError(
        403,
        "host_not_allowed",
        `Host ${JSON.stringify(c.req.header("host") ?? "")} is not this server's local address.`,
        `Address the server as http://127.0.0.1:${policy.port}/ (or localhost). Other names are refused as DNS rebinding.`,
      );
    }
    if (!local && c.req.path.startsWith("/api/")) checkToken(c, policy);
    await next();
  };
}

/** POST needs the local operator header: an origin safeguard (browsers cannot add it cross-origin), not authentication. */
export const requireOperatorHeader: MiddlewareHandler<ApiEnv> = async (c, next) => {
  if (c.req.header(OPERATOR_HEADER) !== OPERATOR_HEADER_VALUE) {
    throw new ApiError(
      403,
      "operator_header_required",
      `POST requests need the header ${OPERATOR_HEADER}: ${OPERATOR_HEADER_VALUE}.`,
      "It is an origin safeguard of the local operator, not authentication: add it to the request.",
    );
  }
  await next();
};

/** Mutations refuse what a browser marks as coming from another site. */
export const requireSameOrigin: MiddlewareHandler<ApiEnv> = async (c, next) => {
  if (!isSameOrigin(c.req.raw.headers)) {
    throw new ApiError(
      403,
      "cross_origin",
      "Cross-origin requests may not mutate the workspace.",
      `Origin ${JSON.stringify(c.req.header("origin") ?? "")}, Sec-Fetch-Site ${JSON.stringify(c.req.header("sec-fetch-site") ?? "")}: use the dashboard served by this server, or a program (which sends neither header).`,
    );
  }
  await next();
};

export function requireToken(policy: AccessPolicy): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    checkToken(c, policy);
    await next();
  };
}

function checkToken(c: Context<ApiEnv>, policy: AccessPolicy): void {
  const header = c.req.header("authorization") ?? "";
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match || !tokenMatches(match[1]!, policy.token)) {
    c.header("WWW-Authenticate", 'Bearer realm="caesar"');
    throw new ApiError(
      401,
      match ? "invalid_token" : "token_required",
      match
        ? "The bearer token is not this workspace's."
        : "This request needs the workspace's bearer token.",
      "Send Authorization: Bearer <token>. The token is in .caesar/state/serve-token (or the one given to --token); the dashboard gets it from the local server.",
    );
  }
}
