import { Hono } from "hono";
import { agentCapabilities } from "../agent-capabilities.js";
import type { ApiContext } from "../api-context.js";
import { ApiError } from "../api-error.js";
import { withEcho } from "../echo.js";
import { parseEnvelope, readJsonBody } from "../envelope.js";
import { AGENT_PROTOCOL, PATHS, PROVENANCE } from "../protocol-ids.js";
import {
  QUERY_OPERATIONS,
  type QueryRequest,
  QueryRequestSchema,
  queryRequestJsonSchema,
} from "../query-schema.js";
import { readTimeline, repositoryNotFound } from "../views/timeline-view.js";
import { type ApiEnv, requireOperatorHeader } from "./guards.js";

/**
 * The agent query contract, `cz-agent/1` (docs/api.md): capabilities, the exact schema, the current state,
 * and one strict, revision-checked query endpoint. Read-only.
 */
export function agentRoutes(ctx: ApiContext): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const schema = queryRequestJsonSchema();

  app.get(PATHS.capabilities, (c) => c.json(agentCapabilities(ctx)));
  app.get(PATHS.schema, (c) => c.json(schema));
  app.get(PATHS.state, (c) =>
    c.json({
      runId: ctx.index.runId,
      version: ctx.index.revision,
      tasks: ctx.index.size,
      timelineEntries: ctx.index.timeline.size,
      provenance: PROVENANCE,
    }),
  );

  app.post(PATHS.query, requireOperatorHeader, async (c) => {
    const raw = await readJsonBody(c.req.raw).catch((error) => {
      throw withEcho(error, undefined);
    });
    let request: QueryRequest;
    try {
      request = parseEnvelope(QueryRequestSchema, raw, {
        protocol: AGENT_PROTOCOL,
        operations: QUERY_OPERATIONS,
        schemaPath: PATHS.schema,
      });
      checkRevision(ctx, request.runId, request.revision);
    } catch (error) {
      throw withEcho(error, raw);
    }
    const result = await runQuery(ctx, request).catch((error) => {
      throw withEcho(error, raw);
    });
    return c.json({
      protocol: AGENT_PROTOCOL,
      requestId: request.requestId,
      runId: ctx.index.runId,
      revision: request.revision,
      provenance: PROVENANCE,
      operation: request.operation,
      result,
    });
  });
  return app;
}

async function runQuery(ctx: ApiContext, request: QueryRequest): Promise<unknown> {
  switch (request.operation) {
    case "timeline.read":
      return readTimeline(ctx.index, ctx.repositories, request.arguments);
    case "repository.read": {
      const repository = ctx.repositories.find(request.arguments.id);
      if (!repository) throw repositoryNotFound(request.arguments.id, ctx.repositories);
      return ctx.repositories.read(repository);
    }
    case "change.read": {
      const { number } = request.arguments;
      const task = ctx.index.byChangeNumber(number);
      if (!task) {
        throw new ApiError(
          "change_not_found",
          `No change #${number} in this workspace.`,
          "Change numbers are the tasks' sequential numbers; list them with timeline.read or `caesar ps --all`.",
        );
      }
      return ctx.changes.read(task);
    }
  }
}

/** A query is answered only at the revision it names: anything else is stale (409), reread /api/state. */
function checkRevision(ctx: ApiContext, runId: string, revision: number): void {
  const { index } = ctx;
  if (runId !== index.runId) {
    throw new ApiError(
      "stale_run",
      `runId ${runId} is not the current run (${index.runId}).`,
      `The server was restarted or you are talking to another workspace: reread GET ${PATHS.state} and retry.`,
    );
  }
  if (revision !== index.revision) {
    throw new ApiError(
      "stale_revision",
      `Revision ${revision} is not the current revision (${index.revision}).`,
      `The workspace changed since you read it: reread GET ${PATHS.state} and retry with its version.`,
    );
  }
}
