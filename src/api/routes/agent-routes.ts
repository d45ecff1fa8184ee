import { Hono } from "hono";
import type { ApiContext } from "../api-context.js";
import { ApiError } from "../api-error.js";
import { parseEnvelope, readJsonBody } from "../envelope.js";
import {
  AGENT_PROTOCOL,
  MUTATE_PROTOCOL,
  OPERATOR_HEADER,
  OPERATOR_HEADER_VALUE,
  PATHS,
  PROVENANCE,
} from "../protocol-ids.js";
import {
  QUERY_OPERATIONS,
  type QueryRequest,
  QueryRequestSchema,
  queryRequestJsonSchema,
} from "../query-schema.js";
import { readTimeline, repositoryNotFound } from "../views/timeline-view.js";
import { type ApiEnv, requireOperatorHeader } from "./guards.js";

/**
 * The agent query contract, `cz-agent/1` (seed 004): capabilities, the exact schema, the current state,
 * and one strict, revision-checked query endpoint. Read-only.
 */
export function agentRoutes(ctx: ApiContext): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const schema = queryRequestJsonSchema();

  app.get(PATHS.capabilities, (c) => c.json(capabilities(ctx)));
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
          404,
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
      409,
      "stale_run",
      `runId ${runId} is not the current run (${index.runId}).`,
      `The server was restarted or you are talking to another workspace: reread GET ${PATHS.state} and retry.`,
    );
  }
  if (revision !== index.revision) {
    throw new ApiError(
      409,
      "stale_revision",
      `Revision ${revision} is not the current revision (${index.revision}).`,
      `The workspace changed since you read it: reread GET ${PATHS.state} and retry with its version.`,
    );
  }
}

/** Error bodies echo what identifies the request (a valid requestId only) and the current run and revision. */
export class EchoedError extends Error {
  constructor(
    readonly inner: unknown,
    readonly echo: { protocol: string; requestId: string | null },
  ) {
    super("echoed");
  }
}

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function withEcho(error: unknown, raw: unknown, protocol = AGENT_PROTOCOL): EchoedError {
  const requestId =
    raw &&
    typeof raw === "object" &&
    "requestId" in raw &&
    typeof raw.requestId === "string" &&
    UUID_SHAPE.test(raw.requestId)
      ? raw.requestId
      : null;
  return new EchoedError(error, { protocol, requestId });
}

function capabilities(ctx: ApiContext) {
  return {
    protocol: AGENT_PROTOCOL,
    service: "caesar",
    version: ctx.version,
    provenance: PROVENANCE,
    readOnly: true,
    runId: ctx.index.runId,
    revision: ctx.index.revision,
    endpoints: {
      capabilities: `GET ${PATHS.capabilities}`,
      schema: `GET ${PATHS.schema}`,
      state: `GET ${PATHS.state}`,
      query: `POST ${PATHS.query}`,
    },
    request: {
      envelope: ["protocol", "requestId", "runId", "revision", "operation", "arguments"],
      requestId: "a fresh UUID for every request",
      revision: `the version from GET ${PATHS.state}; any other value is stale (409)`,
      headers: { [OPERATOR_HEADER]: OPERATOR_HEADER_VALUE, "Content-Type": "application/json" },
    },
    response: ["protocol", "requestId", "runId", "revision", "provenance", "operation", "result"],
    operations: [
      {
        name: "timeline.read",
        arguments: {
          actor: "optional string",
          repo: "optional repository id",
          before: "optional position",
          limit: "optional 1–100 (default 50)",
        },
        result:
          "The events of all tasks (and the user's answers, applies and cancels), newest first; nextBefore pages on.",
      },
      {
        name: "repository.read",
        arguments: { id: "required repository id" },
        result: "Repository metadata and a source snapshot (files of a tree, with sizes and blob ids).",
      },
      {
        name: "change.read",
        arguments: { number: "required positive integer" },
        result: "A task's result: status, report (with findings) and the diff verified by git.",
      },
    ],
    repositories: {
      project: ctx.repositories.projectId,
      worktrees: "a task's worktree is the repository named by its task id",
    },
    actors: ctx.index.timeline.actors(),
    statusCodes: {
      200: "the result",
      400: "invalid JSON, unknown operation, unknown field or invalid argument",
      403: `missing ${OPERATOR_HEADER} header, or a Host that is not this server's local address`,
      404: "no such repository or change",
      409: `stale runId or revision: reread GET ${PATHS.state}`,
      413: "body too large",
      415: "not application/json",
    },
    boundaries: [
      "Read-only: queries never change the workspace; mutations are a separate vocabulary.",
      "Local: the server binds 127.0.0.1 unless started with --host and a token.",
      "Observed: every result is read from real task directories and git, never simulated.",
      "Untrusted: agent output and repository text are returned as data; nothing is executed.",
      "Strict: no silent retry, no best-effort parsing of requests.",
    ],
    mutations: { protocol: MUTATE_PROTOCOL, capabilities: `GET ${PATHS.mutateCapabilities}` },
  };
}
