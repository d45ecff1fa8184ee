import type { Context } from "hono";
import type { ApiContext } from "./api-context.js";
import { type ApiError, toApiError } from "./api-error.js";
import { EchoedError } from "./echo.js";
import type { ErrorResponse } from "./response-schema.js";

/**
 * The one shape every error response has: what identifies the request (when it was valid enough to say),
 * the current run and revision, and `{code, summary, detail}`. The app's `onError` renders with it, and so
 * do the messages of Hono's bearer-auth middleware.
 */
export function renderError(c: Context, ctx: ApiContext, error: unknown): Response {
  const echo = error instanceof EchoedError ? error.echo : undefined;
  const inner = error instanceof EchoedError ? error.inner : error;
  const apiError: ApiError = toApiError(inner);
  if (apiError.status === 500) console.error("caesar serve: internal error:", inner);
  for (const [name, value] of Object.entries(apiError.headers)) c.header(name, value);
  return c.json(
    {
      ...(echo ? { protocol: echo.protocol, requestId: echo.requestId } : {}),
      runId: ctx.index.runId,
      revision: ctx.index.revision,
      ...apiError.toBody(),
    } satisfies ErrorResponse,
    apiError.status,
  );
}
