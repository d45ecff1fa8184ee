import { Hono } from "hono";
import type { ApiContext } from "./api-context.js";
import { ApiError, toApiError } from "./api-error.js";
import { EchoedError } from "./echo.js";
import { agentRoutes } from "./routes/agent-routes.js";
import { dashboardRoutes } from "./routes/dashboard-routes.js";
import { type ApiEnv, accessGuard } from "./routes/guards.js";
import { mutateRoutes } from "./routes/mutate-routes.js";
import { mountStaticFiles } from "./static-files.js";

/** Agent text is untrusted: the page may only run its own scripts, load its own files and talk to this server. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * The whole HTTP surface of `caesar serve` as one Hono app (tested in-process with `app.request`, served by
 * @hono/node-server): the query contract, the mutation vocabulary, the dashboard's reads and streams, and
 * its static files.
 */
export function createApp(ctx: ApiContext): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();

  app.use("*", async (c, next) => {
    await next();
    c.header("Content-Security-Policy", CONTENT_SECURITY_POLICY);
    c.header("X-Content-Type-Options", "nosniff");
    c.header("Referrer-Policy", "no-referrer");
    c.header("X-Frame-Options", "DENY");
    c.header("Cross-Origin-Resource-Policy", "same-origin");
    if (c.req.path.startsWith("/api/") && !c.res.headers.has("Cache-Control"))
      c.header("Cache-Control", "no-store");
  });
  app.use("*", accessGuard(ctx.access));

  app.route("/", agentRoutes(ctx));
  app.route("/", mutateRoutes(ctx));
  app.route("/", dashboardRoutes(ctx));
  mountStaticFiles(app);

  app.notFound((c) =>
    c.json(
      new ApiError(
        404,
        "not_found",
        `No endpoint ${c.req.method} ${c.req.path.slice(0, 200)}.`,
        "The endpoints are listed by GET /api/agent/v1 and GET /api/mutate/v1.",
      ).toBody(),
      404,
    ),
  );

  app.onError((error, c) => {
    const echo = error instanceof EchoedError ? error.echo : undefined;
    const inner = error instanceof EchoedError ? error.inner : error;
    const apiError = toApiError(inner);
    if (apiError.status === 500) console.error("caesar serve: internal error:", inner);
    return c.json(
      {
        ...(echo ? { protocol: echo.protocol, requestId: echo.requestId } : {}),
        runId: ctx.index.runId,
        revision: ctx.index.revision,
        ...apiError.toBody(),
      },
      apiError.status,
    );
  });
  return app;
}
