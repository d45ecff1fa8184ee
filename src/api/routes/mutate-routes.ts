import { Hono } from "hono";
import { startPlannedTask } from "../../cluster/start.js";
import { answerTask } from "../../engine/lifecycle/answer-task.js";
import { applyTask } from "../../engine/lifecycle/apply-task.js";
import { cancelTask } from "../../engine/lifecycle/cancel.js";
import { resolvePlan } from "../../engine/lifecycle/plan.js";
import { CALLER_FIELDS, parseDelegationRequest } from "../../engine/lifecycle/request.js";
import { jsonPath } from "../../protocol/documents.js";
import type { ApiContext } from "../api-context.js";
import { ApiError } from "../api-error.js";
import { withEcho } from "../echo.js";
import { parseEnvelope, readJsonBody } from "../envelope.js";
import type { IndexedTask } from "../index/indexed-task.js";
import { RecentIds } from "../index/request-ids.js";
import { mutateCapabilities } from "../mutate-capabilities.js";
import {
  FORMER_ARGUMENTS,
  MUTATION_OPERATIONS,
  type MutationRequest,
  MutationRequestSchema,
  mutationRequestJsonSchema,
} from "../mutation-schema.js";
import { MUTATE_PROTOCOL, PATHS, PROVENANCE } from "../protocol-ids.js";
import type { AnswerResult, ApplyResult, CancelResult, DelegateResult } from "../response-schema.js";
import { summarizeTask } from "../views/task-summary.js";
import {
  type ApiEnv,
  refuseCrossSiteForms,
  requireAuthentication,
  requireOperatorHeader,
  requireSameOrigin,
} from "./guards.js";

/** Who the engine records as the author of what the HTTP API does (answers, applies, cancels, tasks). */
const BY = "http";

/**
 * The mutation vocabulary, `cz-mutate/1`: delegate, cancel, answer, apply. Each request names the revision
 * it was based on; if what it acts on changed after that revision the server answers 409 and does nothing.
 * It never retries for the caller. A replayed requestId is refused (409) instead of run twice.
 */
export function mutateRoutes(ctx: ApiContext): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const schema = mutationRequestJsonSchema();
  const seen = new RecentIds();

  app.get(PATHS.mutateCapabilities, (c) => c.json(mutateCapabilities(ctx)));
  app.get(PATHS.commonsProtocol, (c) => c.json(mutateCapabilities(ctx)));
  app.get(PATHS.mutateSchema, (c) => c.json(schema));

  app.post(
    PATHS.mutate,
    // A browser's cross-site request is refused for what it is, before the operator header is looked at.
    refuseCrossSiteForms(),
    requireSameOrigin,
    requireOperatorHeader,
    requireAuthentication(ctx, { mutation: true }),
    async (c) => {
      const raw = await readJsonBody(c.req.raw).catch((error) => {
        throw withEcho(error, undefined, MUTATE_PROTOCOL);
      });
      try {
        const request = parseEnvelope(MutationRequestSchema, raw, {
          protocol: MUTATE_PROTOCOL,
          operations: MUTATION_OPERATIONS,
          schemaPath: PATHS.mutateSchema,
          formerNames: FORMER_ARGUMENTS,
        });
        if (!seen.add(request.requestId)) {
          throw new ApiError(
            "duplicate_request",
            `requestId ${request.requestId} was already received; it is not run twice.`,
            "Use a fresh UUID for every request. Reread the state to see what the first one did.",
          );
        }
        const result = await runMutation(ctx, request, raw);
        return c.json({
          protocol: MUTATE_PROTOCOL,
          requestId: request.requestId,
          runId: ctx.index.runId,
          basedOn: request.revision,
          revision: ctx.index.revision,
          provenance: PROVENANCE,
          operation: request.operation,
          result,
        });
      } catch (error) {
        throw withEcho(error, raw, MUTATE_PROTOCOL);
      }
    },
  );
  return app;
}

/**
 * Act on a valid envelope. A delegation's arguments (valid: the envelope's schema holds the request's
 * fields) go through the request's one parse, as on every surface: `raw` is the body as sent.
 */
async function runMutation(ctx: ApiContext, request: MutationRequest, raw: unknown): Promise<unknown> {
  const { index } = ctx;
  checkRun(ctx, request);
  switch (request.operation) {
    case "task.delegate": {
      const given = raw !== null && typeof raw === "object" && "arguments" in raw ? raw.arguments : undefined;
      const delegation = parseDelegationRequest(given, {
        accept: CALLER_FIELDS,
        set: { requested_by: BY },
        spell: (path) => jsonPath(["arguments", ...path]),
      });
      const { plan } = await resolvePlan(delegation, { root: ctx.root });
      const record = await startPlannedTask(plan);
      await index.refresh([record.id]);
      const task = index.task(record.id);
      return {
        taskId: record.id,
        changeNumber: record.state.change_number,
        task: task ? summarizeTask(task) : null,
      } satisfies DelegateResult;
    }
    case "task.cancel": {
      const task = await fresh(ctx, request.arguments.task_id);
      checkTarget(request, task.stateRevision, `task ${task.id}`);
      const { state, changed } = await cancelTask(record(task), BY);
      await index.refresh([task.id]);
      return {
        taskId: task.id,
        cancelled: changed,
        phase: state.phase,
        outcome: state.outcome,
      } satisfies CancelResult;
    }
    case "question.answer": {
      const { task_id: taskId, question_id: questionId, answer } = request.arguments;
      const task = await fresh(ctx, taskId);
      checkTarget(request, task.questionsRevision, `the questions of task ${task.id}`);
      const written = await answerTask(record(task), questionId, answer, BY);
      await index.refresh([task.id]);
      return {
        taskId: task.id,
        questionId,
        answeredAt: written.answered_at,
        answeredBy: written.answered_by ?? null,
      } satisfies AnswerResult;
    }
    case "change.apply": {
      const { number, force } = request.arguments;
      await index.refresh();
      const found = index.byChangeNumber(number);
      if (!found) throw changeNotFound(number);
      const task = await fresh(ctx, found.id);
      checkTarget(request, task.stateRevision, `change #${number}`);
      const applied = await applyTask(record(task), { force: force === true, by: BY });
      await index.refresh([task.id]);
      return {
        number,
        taskId: task.id,
        files: applied.files,
        head: applied.head,
        stagedIn: applied.top,
      } satisfies ApplyResult;
    }
  }
}

function checkRun(ctx: ApiContext, request: MutationRequest): void {
  const { index } = ctx;
  if (request.runId !== index.runId) {
    throw new ApiError(
      "stale_run",
      `runId ${request.runId} is not the current run (${index.runId}).`,
      `The server was restarted or you are talking to another workspace: reread GET ${PATHS.state}, review, and decide again.`,
    );
  }
  if (request.revision > index.revision) {
    throw new ApiError(
      "stale_revision",
      `Revision ${request.revision} was never issued (current: ${index.revision}).`,
      `Base the request on the version from GET ${PATHS.state}.`,
    );
  }
}

/** The target must not have changed after the revision the request was based on. */
function checkTarget(request: MutationRequest, changedAt: number, what: string): void {
  if (changedAt > request.revision) {
    throw new ApiError(
      "stale_revision",
      `${what[0]!.toUpperCase()}${what.slice(1)} changed at revision ${changedAt}, after revision ${request.revision} this request was based on.`,
      `Nothing was done. Reread it (GET ${PATHS.tasks}/<id>, or the query API), decide again, and send a new request with the new revision.`,
    );
  }
}

/** Look a task up after re-reading its files, so the revision check never trails a watcher. */
async function fresh(ctx: ApiContext, id: string): Promise<IndexedTask> {
  await ctx.index.refresh([id]);
  const task = ctx.index.task(id);
  if (!task) {
    throw new ApiError(
      "task_not_found",
      `No task ${id} in this workspace.`,
      "Task ids are exact here (no prefixes).",
    );
  }
  return task;
}

function record(task: IndexedTask) {
  return { id: task.id, dir: task.dir, paths: task.paths, state: task.state };
}

function changeNotFound(number: number): ApiError {
  return new ApiError(
    "change_not_found",
    `No change #${number} in this workspace.`,
    "List changes with timeline.read or `caesar ps --all`.",
  );
}
