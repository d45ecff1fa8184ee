import { Hono } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import * as z from "../../support/zod.js";
import type { ApiContext } from "../api-context.js";
import { ApiError } from "../api-error.js";
import { MUTATE_PROTOCOL, PATHS } from "../protocol-ids.js";
import type { Session } from "../response-schema.js";
import { NONCE_PATTERN, proofOf } from "../security/proof.js";
import { CSRF_HEADER, SECRET_PATTERN, sessionCookieName } from "../security/sessions.js";
import {
  type ApiEnv,
  currentTokenOf,
  refuseCrossSiteForms,
  requireAuthentication,
  requireOperatorHeader,
  requireSameOrigin,
} from "./guards.js";

const LoginQuerySchema = z.object({ code: z.string().regex(SECRET_PATTERN) });
const ProveBodySchema = z.object({ nonce: z.string().regex(NONCE_PATTERN) });

/** The URL fragment the login hands the page its CSRF secret in (a fragment never reaches a server). */
export const LOGIN_FRAGMENT = "#login=";

/**
 * Logging in, the way Jupyter does: `GET /login?code=…` spends a one-time code (printed by `caesar serve`,
 * or minted for the token's holder by `POST /api/login-links`) for a session of this run of the server:
 * an HttpOnly, SameSite=Strict cookie, and a CSRF secret handed to the page in the redirect's fragment.
 * No endpoint ever answers with the bearer token.
 */
export function sessionRoutes(ctx: ApiContext): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();

  app.get(PATHS.login, (c) => {
    const parsed = LoginQuerySchema.safeParse(c.req.query());
    const redeemed = parsed.success ? ctx.sessions.redeem(parsed.data.code) : undefined;
    c.header("Cache-Control", "no-store");
    if (!redeemed) {
      throw new ApiError(
        "login_code_invalid",
        "This login link is not valid: it was used already, or it is from another run of the server.",
        "Each login link works once. Run `caesar serve login` in the workspace for a new one (it needs the server's token, so only its owner can).",
      );
    }
    setCookie(c, sessionCookieName(ctx.access.port), redeemed.session, {
      httpOnly: true,
      sameSite: "Strict",
      path: "/",
    });
    return c.redirect(`/${LOGIN_FRAGMENT}${redeemed.csrf}`, 303);
  });

  app.get(PATHS.session, (c) => {
    const authenticated = ctx.sessions.find(getCookie(c, sessionCookieName(ctx.access.port))) !== undefined;
    return c.json({
      authenticated,
      csrfHeader: CSRF_HEADER,
      login: authenticated
        ? null
        : "Open the one-time login URL `caesar serve` printed, or run `caesar serve login` in the workspace for a new one.",
      runId: ctx.index.runId,
      revision: ctx.index.revision,
      mutate: { protocol: MUTATE_PROTOCOL, path: PATHS.mutate },
    } satisfies Session);
  });

  // Unauthenticated by design: the answer proves the key without revealing it (security/proof.ts), so that
  // `caesar serve login` sends the key to no server that has not proven it holds it.
  app.post(PATHS.prove, async (c) => {
    const parsed = ProveBodySchema.safeParse(await c.req.json().catch(() => undefined));
    if (!parsed.success) {
      throw new ApiError(
        "invalid_nonce",
        'POST /api/prove takes {"nonce": "<64 hex digits>"}.',
        "Send a fresh random nonce of 32 bytes, in hex.",
      );
    }
    c.header("Cache-Control", "no-store");
    return c.json({ proof: proofOf(await currentTokenOf(ctx), ctx.access.origin, parsed.data.nonce) });
  });

  app.post(
    PATHS.loginLinks,
    // A browser's cross-site request is refused for what it is, before the operator header is looked at.
    refuseCrossSiteForms(),
    requireSameOrigin,
    requireOperatorHeader,
    requireAuthentication(ctx, { mutation: true }),
    (c) => {
      if (c.get("authentication") !== "bearer") {
        throw new ApiError(
          "bearer_required",
          "Only the holder of the bearer token may mint login links.",
          "Run `caesar serve login` in the workspace: it reads the token and asks for a link.",
        );
      }
      return c.json({ url: loginUrl(ctx, ctx.sessions.mintCode()) });
    },
  );
  return app;
}

/** The one-time login URL of a code, at the address this server prints. */
export function loginUrl(ctx: ApiContext, code: string): string {
  return `${ctx.access.origin}${PATHS.login}?code=${code}`;
}
