import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { secureHeaders } from "hono/secure-headers";
import type { ApiContext } from "./api-context.js";
import { ApiError } from "./api-error.js";
import { renderError } from "./error-response.js";
import { agentRoutes } from "./routes/agent-routes.js";
import { dashboardRoutes } from "./routes/dashboard-routes.js";
import { type ApiEnv, accessGuard } from "./routes/guards.js";
import { mutateRoutes } from "./routes/mutate-routes.js";
import { sessionRoutes } from "./routes/session-routes.js";
import { mountStaticFiles } from "./static-files.js";

/**
 * Agent text is untrusted: the page may only run its own scripts, load its own files and talk to this
 * server; nothing may frame it. HSTS is left out: the server speaks plain HTTP on loopback.
 */
const SECURE_HEADERS = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'none'"],
    scriptSrc: ["'self'"],
    styleSrc: ["'self'"],
    imgSrc: ["'self'", "data:"],
    connectSrc: ["'self'"],
    baseUri: ["'none'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
  },
  xFrameOptions: "DENY",
  referrerPolicy: "no-referrer",
  crossOriginResourcePolicy: "same-origin",
  strictTransportSecurity: false,
});

/**
 * The whole HTTP surface of `caesar serve` as one Hono app (tested in-process with `app.request`, served by
 * @hono/node-server): the query contract, the mutation vocabulary, logins, the dashboard's reads and
 * streams, and its static files.
 */
export function createApp(ctx: ApiContext): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();

  app.use("*", SECURE_HEADERS);
  app.use("/api/*", async (c, next) => {
    await next();
    if (!c.res.headers.has("Cache-Control")) c.header("Cache-Control", "no-store");
  });
  app.use("*", accessGuard(ctx));

  app.route("/", agentRoutes(ctx));
  app.route("/", mutateRoutes(ctx));
  app.route("/", sessionRoutes(ctx));
  app.route("/", dashboardRoutes(ctx));
  mountStaticFiles(app);

  app.notFound((c) =>
    renderError(
      c,
      ctx,
      new ApiError(
        "not_found",
        `No endpoint ${c.req.method} ${c.req.path.slice(0, 200)}.`,
        "The endpoints are listed by GET /api/agent/v1 and GET /api/mutate/v1.",
      ),
    ),
  );

  // Hono's own middleware (bearer auth) throws HTTPExceptions whose response renderError already built.
  app.onError((error, c) => {
    if (error instanceof HTTPException && !(error instanceof ApiError) && error.res)
      return error.getResponse();
    return renderError(c, ctx, error);
  });
  return app;
}
