import type { ApiContext } from "./api-context.js";
import {
  AGENT_PROTOCOL,
  MUTATE_PROTOCOL,
  OPERATOR_HEADER,
  OPERATOR_HEADER_VALUE,
  PATHS,
  PROVENANCE,
} from "./protocol-ids.js";
import type { AgentCapabilities } from "./response-schema.js";

/** `GET /api/agent/v1`: what the query contract offers, how to call it, and its boundaries. */
export function agentCapabilities(ctx: ApiContext) {
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
      400: "invalid JSON, unknown operation, unknown field or invalid argument (a control character in a string included)",
      403: `missing ${OPERATOR_HEADER} header, or a Host this server is not served at`,
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
    mutations: {
      protocol: MUTATE_PROTOCOL,
      capabilities: `GET ${PATHS.mutateCapabilities}`,
      discovery: `GET ${PATHS.commonsProtocol}`,
    },
  } satisfies AgentCapabilities;
}
