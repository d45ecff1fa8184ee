import type * as z from "../support/zod.js";
import type { ApiContext } from "./api-context.js";
import {
  AnswerArgumentsSchema,
  ApplyArgumentsSchema,
  CancelArgumentsSchema,
  DelegateArgumentsSchema,
} from "./mutation-schema.js";
import { MUTATE_PROTOCOL, OPERATOR_HEADER, OPERATOR_HEADER_VALUE, PATHS } from "./protocol-ids.js";
import { CSRF_HEADER } from "./security/sessions.js";

/**
 * `GET /api/mutate/v1` (and the discovery path docs/api.md explains, `GET /api/commons/protocol`): the
 * mutation vocabulary, its authentication, and when each operation is stale.
 */
export function mutateCapabilities(ctx: ApiContext) {
  return {
    protocol: MUTATE_PROTOCOL,
    service: "caesar",
    version: ctx.version,
    runId: ctx.index.runId,
    revision: ctx.index.revision,
    endpoints: {
      capabilities: `GET ${PATHS.mutateCapabilities}`,
      protocol: `GET ${PATHS.commonsProtocol}`,
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
        Authorization: "Bearer <token> (.caesar/state/serve/token, or the server's --token) — or a session",
        [OPERATOR_HEADER]: OPERATOR_HEADER_VALUE,
        "Content-Type": "application/json",
      },
    },
    authentication: {
      bearer:
        "Authorization: Bearer <token>. The token is in .caesar/state/serve/token (mode 0600, in a 0700 directory): programs and scripts of the workspace's owner read it there. No endpoint hands it out.",
      session: `The dashboard's: GET ${PATHS.login}?code=<one-time code> (the URL \`caesar serve\` prints, or \`caesar serve login\`) sets an HttpOnly, SameSite=Strict cookie for this run of the server and hands the page a CSRF secret. A mutation by session carries the cookie, this server's own Origin, and ${CSRF_HEADER}: <secret>.`,
      loginLinks: `POST ${PATHS.loginLinks} with the bearer token: a new one-time login URL.`,
    },
    response: ["protocol", "requestId", "runId", "basedOn", "revision", "provenance", "operation", "result"],
    operations: [
      {
        name: "task.delegate",
        arguments: argumentList(DelegateArgumentsSchema),
        stale: "only when runId differs or revision was never issued (a new task conflicts with nothing)",
        result: "taskId, changeNumber and the task's summary; the task runs on its own conductor",
      },
      {
        name: "task.cancel",
        arguments: argumentList(CancelArgumentsSchema),
        stale: "when the task's state.json changed after revision",
        result: "whether it was cancelled, and its final phase and outcome",
      },
      {
        name: "question.answer",
        arguments: argumentList(AnswerArgumentsSchema),
        stale:
          "when the task's questions or answers changed after revision; a question already answered is 409 already_answered",
        result: "when and by whom it was answered",
      },
      {
        name: "change.apply",
        arguments: argumentList(ApplyArgumentsSchema),
        stale: "when the task's state.json changed after revision",
        result: "the files staged in the working tree, and the HEAD they were merged with",
      },
    ],
    statusCodes: {
      200: "done",
      400: "invalid JSON, unknown operation, unknown field or invalid argument",
      401: "no bearer token or session, a wrong token, or a session of another run of the server",
      403: `missing ${OPERATOR_HEADER} header, a cross-origin browser request, a session request without its Origin or ${CSRF_HEADER}, or a Host this server is not served at`,
      404: "no such task, question or change",
      409: "stale runId or revision, a replayed requestId, or a question answered first by someone else",
      422: "refused by caesar (policy, nothing to apply, a conflict with your working tree…): the error names it",
    },
    boundaries: [
      "Explicit: every mutation names the revision it was based on; a stale one is refused, never retried.",
      "Authenticated: the workspace's bearer token (read from a file only its owner can read), or a dashboard session obtained with a one-time login link. No endpoint hands out the token.",
      "Same-origin: browsers' cross-site requests are refused; a session acts only with its Origin and CSRF secret.",
      "Checked strings: no request string may carry control characters (tab and line breaks only in free text).",
      "The same engine as the CLI: policy refusals, apply's safety checks and the first-answer-wins rule hold.",
    ],
  };
}

/** An operation's arguments, from its schema: `objective (required), agent, …` (durations as "20m"). */
function argumentList(schema: z.ZodObject): string {
  return Object.entries(schema.shape)
    .map(([name, field]) => (field.def.type === "optional" ? name : `${name} (required)`))
    .join(", ");
}
