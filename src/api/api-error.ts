import { HTTPException } from "hono/http-exception";
import { isCaesarError } from "../support/errors.js";

/** One validation problem of a request body: where (a JSON path) and what. */
export interface RequestIssue {
  path: string;
  message: string;
}

export interface ApiErrorBody {
  error: { code: string; summary: string; detail: string; issues?: RequestIssue[] };
}

export type ApiStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 422 | 500;

/**
 * An error the HTTP API answers with: a status, a stable code, a summary saying what happened and a detail
 * saying what to do (the same `{code, summary, detail}` shape as the CLI's `--json` errors). It is Hono's
 * HTTPException, so the app's one `onError` renders it, as it renders those Hono's own middleware throws.
 */
export class ApiError extends HTTPException {
  override readonly status: ApiStatus;

  constructor(
    status: ApiStatus,
    readonly code: string,
    summary: string,
    readonly detail = "",
    readonly issues?: RequestIssue[],
    /** Response headers the error needs (WWW-Authenticate on a 401). */
    readonly headers: Record<string, string> = {},
  ) {
    super(status, { message: summary });
    this.status = status;
    this.name = "ApiError";
  }

  toBody(): ApiErrorBody {
    return {
      error: {
        code: this.code,
        summary: this.message,
        detail: this.detail,
        ...(this.issues ? { issues: this.issues } : {}),
      },
    };
  }
}

/** Engine errors that mean "no such thing" (404) or "someone else got there first" (409). */
const NOT_FOUND_CODES = new Set(["task_not_found", "unknown_question"]);
const CONFLICT_CODES = new Set(["already_answered"]);

/** The code an HTTPException of Hono's middleware gets, by status, when it carries none of ours. */
const HTTP_CODES: Partial<Record<number, [string, string]>> = {
  400: ["bad_request", "Send a well-formed request."],
  401: ["authentication_required", "Authenticate: see GET /api/mutate/v1."],
  403: ["forbidden", "This server refuses the request as sent."],
  404: ["not_found", "The endpoints are listed by GET /api/agent/v1 and GET /api/mutate/v1."],
  413: ["body_too_large", "Send less."],
};

/**
 * Turn anything thrown while serving into an ApiError. An HTTPException of Hono's middleware keeps its
 * status (and its message when it has one); an engine refusal (a CaesarError: policy, nothing to apply, a
 * merge conflict…) is a 422 carrying the engine's own code and message; anything else is a bug, reported
 * as 500 without its internals.
 */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof HTTPException && error.status < 500) {
    const status = (error.status in HTTP_CODES ? error.status : 400) as ApiStatus;
    const [code, detail] = HTTP_CODES[status]!;
    return new ApiError(status, code, error.message || `The request was refused (${error.status}).`, detail);
  }
  if (isCaesarError(error)) {
    const status = NOT_FOUND_CODES.has(error.code) ? 404 : CONFLICT_CODES.has(error.code) ? 409 : 422;
    return new ApiError(status, error.code, error.message, error.detail);
  }
  return new ApiError(
    500,
    "internal_error",
    "Internal error while serving the request.",
    "This is a bug in caesar; the server log has the details. Please report it.",
  );
}
