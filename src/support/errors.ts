/**
 * Errors a user can meet. Each carries a stable `code`, a one-line `summary` that says what happened,
 * a `detail` that says what to do, and the process exit code the CLI should use.
 */

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

export type ExitCode = typeof EXIT_OK | typeof EXIT_FAILURE | typeof EXIT_USAGE | number;

export interface CaesarErrorOptions {
  detail?: string;
  exitCode?: ExitCode;
  cause?: unknown;
  data?: Record<string, unknown>;
}

export class CaesarError extends Error {
  readonly code: string;
  readonly detail: string;
  readonly exitCode: ExitCode;
  readonly data: Record<string, unknown>;

  constructor(code: string, summary: string, options: CaesarErrorOptions = {}) {
    super(summary, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "CaesarError";
    this.code = code;
    this.detail = options.detail ?? "";
    this.exitCode = options.exitCode ?? EXIT_FAILURE;
    this.data = options.data ?? {};
  }

  get summary(): string {
    return this.message;
  }

  toJSON(): { code: string; summary: string; detail: string } {
    return { code: this.code, summary: this.message, detail: this.detail };
  }
}

/** A usage or configuration problem: exit code 2. */
export class UsageError extends CaesarError {
  constructor(code: string, summary: string, options: Omit<CaesarErrorOptions, "exitCode"> = {}) {
    super(code, summary, { ...options, exitCode: EXIT_USAGE });
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

/** `code` of a Node system error (ENOENT, EEXIST, …), if any. */
export function errnoOf(error: unknown): string | undefined {
  if (error && typeof error === "object" && "code" in error && typeof error.code === "string")
    return error.code;
  return undefined;
}
