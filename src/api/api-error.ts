import { HTTPException } from "hono/http-exception";
import { ERRORS, type HttpStatus } from "../support/error-catalogue.js";
import { diskFullError, isCaesarError, type ThrownCode } from "../support/errors.js";

/** One validation problem of a request body: where (a JSON path) and what. */
export interface RequestIssue {
  path: string;
  message: string;
}

export interface ApiErrorBody {
  error: { code: string; summary: string; detail: string; issues?: RequestIssue[] };
}

export type ApiStatus = HttpStatus;

/**
 * An error the HTTP API answers with: a stable code of the error catalogue, whose status it is answered
 * with, a summary saying what happened and a detail saying what to do (the same `{code, summary, detail}`
 * shape as the CLI's `--json` errors). It is Hono's HTTPException, so the app's one `onError` renders it,
 * as it renders those Hono's own middleware throws.
 */
export class ApiError extends HTTPException {
  override readonly status: ApiStatus;

  constructor(
    readonly code: ThrownCode,
    summary: string,
    readonly detail = "",
    readonly issues?: RequestIssue[],
    /** Response headers the error needs (WWW-Authenticate on a 401). */
    readonly headers: Record<string, string> = {},
  ) {
    const status = ERRORS[code].http;
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

/** The code an HTTPException of Hono's middleware gets, by status, when it carries none of ours. */
const HTTP_CODES: Partial<Record<number, [ThrownCode, string]>> = {
  400: ["bad_request", "Send a well-formed request."],
  401: ["authentication_required", "Authenticate: see GET /api/mutate/v1."],
  403: ["forbidden", "This server refuses the request as sent."],
  404: ["not_found", "The endpoints are listed by GET /api/agent/v1 and GET /api/mutate/v1."],
  413: ["body_too_large", "Send less."],
};

/**
 * Turn anything thrown while serving into an ApiError. An HTTPException of Hono's middleware keeps its
 * status (and its message when it has one); a CaesarError (a refusal: policy, nothing to apply, a merge
 * conflict…; or no such task) is answered with the status the error catalogue gives its code, and the
 * engine's own code and message; anything else is a bug, reported as 500 without its internals.
 */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof HTTPException && error.status < 500) {
    const [code, detail] = HTTP_CODES[error.status] ?? HTTP_CODES[400]!;
    return new ApiError(code, error.message || `The request was refused (${error.status}).`, detail);
  }
  if (isCaesarError(error)) return new ApiError(error.code, error.message, error.detail);
  const full = diskFullError(error);
  if (full) return new ApiError(full.code, full.message, full.detail);
  return new ApiError(
    "internal_error",
    "Internal error while serving the request.",
    "This is a bug in caesar; the server log has the details. Please report it.",
  );
}
