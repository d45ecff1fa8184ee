import { isCaesarError } from "../support/errors.js";

/** One validation problem of a request body: where (a JSON path) and what. */
export interface RequestIssue {
  path: string;
  message: string;
}

export interface ApiErrorBody {
  error: { code: string; summary: string; detail: string; issues?: RequestIssue[] };
}

/**
 * An error the HTTP API answers with: a status, a stable code, a summary saying what happened and a detail
 * saying what to do (the same `{code, summary, detail}` shape as the CLI's `--json` errors).
 */
export class ApiError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 413 | 415 | 422 | 500,
    readonly code: string,
    summary: string,
    readonly detail = "",
    readonly issues?: RequestIssue[],
  ) {
    super(summary);
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

/**
 * Turn anything thrown while serving into an ApiError. An engine refusal (a CaesarError: policy, nothing
 * to apply, a merge conflict…) is a 422 carrying the engine's own code and message; anything else is a
 * bug, reported as 500 without its internals.
 */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
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
