import type { ApiContext } from "./api-context.js";
import { MUTATE_PROTOCOL, OPERATOR_HEADER, OPERATOR_HEADER_VALUE, PATHS } from "./protocol-ids.js";

/** `GET /api/mutate/v1`: the mutation vocabulary, its authentication, and when each operation is stale. */
export function mutateCapabilities(ctx: ApiContext) {
  return {
    protocol: MUTATE_PROTOCOL,
    service: "caesar",
    version: ctx.version,
    runId: ctx.index.runId,
    revision: ctx.index.revision,
    endpoints: {
      capabilities: `GET ${PATHS.mutateCapabilities}`,
      schema: `GET ${PATHS.mutateSchema}`,
      state: `GET ${PATHS.state}`,
      request: `POST ${PATHS.mutate}`,
    },
    request: {
      envelope: ["protocol", "requestId", "runId", "revision", "operation", "arguments"],
      requestId:
        "a fresh UUID for every request; a replayed one is refused (409 duplicate_request), never run twice",
      revision: "the version your decision was based on",
      headers: {
        Authorization: "Bearer <token> (.caesar/state/serve-token, or the server's --token)",
        [OPERATOR_HEADER]: OPERATOR_HEADER_VALUE,
        "Content-Type": "application/json",
      },
    },
    response: ["protocol", "requestId", "runId", "basedOn", "revision", "provenance", "operation", "result"],
    operations: [
      {
        name: "task.delegate",
        arguments:
          "objective (required), agent, role, mode, isolation, network, timeoutMs, model, context, constraints, acceptance",
        stale: "only when runId differs or revision was never issued (a new task conflicts with nothing)",
        result: "taskId, changeNumber and the task's summary; the task runs on its own conductor",
      },
      {
        name: "task.cancel",
        arguments: "taskId",
        stale: "when the task's state.json changed after revision",
        result: "whether it was cancelled, and its final phase and outcome",
      },
      {
        name: "question.answer",
        arguments: "taskId, questionId, answer",
        stale:
          "when the task's questions or answers changed after revision; a question already answered is 409 already_answered",
        result: "when and by whom it was answered",
      },
      {
        name: "change.apply",
        arguments: "number, force (optional)",
        stale: "when the task's state.json changed after revision",
        result: "the files staged in the working tree, and the HEAD they were merged with",
      },
    ],
    statusCodes: {
      200: "done",
      400: "invalid JSON, unknown operation, unknown field or invalid argument",
      401: "missing or wrong bearer token",
      403: `missing ${OPERATOR_HEADER} header, a cross-origin browser request, or a Host that is not local`,
      404: "no such task, question or change",
      409: "stale runId or revision, a replayed requestId, or a question answered first by someone else",
      422: "refused by caesar (policy, nothing to apply, a conflict with your working tree…): the error names it",
    },
    boundaries: [
      "Explicit: every mutation names the revision it was based on; a stale one is refused, never retried.",
      "Authenticated: a per-workspace bearer token; the dashboard obtains it from the local server only.",
      "Same-origin: browsers' cross-site requests are refused.",
      "The same engine as the CLI: policy refusals, apply's safety checks and the first-answer-wins rule hold.",
    ],
  };
}
