import { ERRORS, type ThrownCode, type UsageCode } from "./error-catalogue.js";

export type { ErrorCode, ThrownCode, UsageCode } from "./error-catalogue.js";

/**
 * Errors a user can meet. Each carries a stable `code` of the error catalogue (./error-catalogue.ts), a
 * one-line `summary` that says what happened, a `detail` that says what to do, and the process exit code
 * the CLI should use — the catalogue's for that code.
 */

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

export type ExitCode = typeof EXIT_OK | typeof EXIT_FAILURE | typeof EXIT_USAGE | number;

export interface CaesarErrorOptions {
  detail?: string;
  cause?: unknown;
  data?: Record<string, unknown>;
}

export class CaesarError extends Error {
  readonly code: ThrownCode;
  readonly detail: string;
  readonly exitCode: ExitCode;
  readonly data: Record<string, unknown>;

  constructor(code: ThrownCode, summary: string, options: CaesarErrorOptions = {}) {
    super(summary, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "CaesarError";
    this.code = code;
    this.detail = options.detail ?? "";
    this.exitCode = ERRORS[code].exit;
    this.data = options.data ?? {};
  }

  get summary(): string {
    return this.message;
  }

  toJSON(): { code: string; summary: string; detail: string } {
    return { code: this.code, summary: this.message, detail: this.detail };
  }
}

/** A usage or configuration problem: one of the codes the catalogue gives exit code 2. */
export class UsageError extends CaesarError {
  constructor(code: UsageCode, summary: string, options: CaesarErrorOptions = {}) {
    super(code, summary, options);
    this.name = "UsageError";
  }
}

export function isCaesarError(value: unknown): value is CaesarError {
  return value instanceof CaesarError;
}

/** The message of any thrown value, for places that must degrade to text. */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/** What went wrong and, for caesar's own errors, what to do: the message and its detail, on one line. */
export function describeError(error: unknown): string {
  if (isCaesarError(error)) return `${error.message}${error.detail ? ` ${error.detail}` : ""}`;
  return messageOf(error);
}

/** `code` of a Node system error (ENOENT, EEXIST, …), if any. */
export function errnoOf(error: unknown): string | undefined {
  if (error && typeof error === "object" && "code" in error && typeof error.code === "string")
    return error.code;
  return undefined;
}

/**
 * A Node system error that says the device is full (ENOSPC, or EDQUOT: the quota), as caesar's `disk_full`
 * naming the file where Node says which; anything else: undefined. What caesar meets then is not a bug.
 */
export function diskFullError(error: unknown): CaesarError | undefined {
  if (isCaesarError(error)) return error.code === "disk_full" ? error : undefined;
  const errno = errnoOf(error);
  if (errno !== "ENOSPC" && errno !== "EDQUOT") return undefined;
  const path = error && typeof error === "object" && "path" in error ? String(error.path) : undefined;
  const what = errno === "EDQUOT" ? "The disk quota is reached" : "No space left on the device";
  return new CaesarError("disk_full", `${what}${path ? ` writing ${path}` : ""}.`, {
    detail:
      "Free some space (`df -h` says where) and run the command again. A task that was running is finished, failed, once caesar can write its records again; its worktree is kept.",
    cause: error,
  });
}
