import { CaesarError, diskFullError, EXIT_FAILURE, errnoOf, isCaesarError } from "../support/errors.js";

/**
 * Where a command's output goes. Results go to stdout; progress and notices to stderr.
 * With --json, stdout carries exactly one JSON document (or NDJSON for streams) and nothing else.
 */
/**
 * A reader that stops early (`caesar logs … | head`) is not an error: when stdout or stderr's pipe
 * closes, the command ends quietly, as other command-line tools do.
 */
export function endQuietlyOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error) => {
      if (errnoOf(error) !== "EPIPE") throw error;
      process.exit(typeof process.exitCode === "number" ? process.exitCode : 0);
    });
  }
}

export class Output {
  constructor(
    readonly json: boolean,
    private readonly stdout: NodeJS.WritableStream = process.stdout,
    private readonly stderr: NodeJS.WritableStream = process.stderr,
  ) {}

  /** The command's result: `value` as JSON under --json, else the human `text`. */
  result(value: unknown, text?: string | (() => string)): void {
    if (this.json) {
      this.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
      return;
    }
    const rendered = typeof text === "function" ? text() : text;
    if (rendered !== undefined && rendered !== "") {
      this.stdout.write(rendered.endsWith("\n") ? rendered : `${rendered}\n`);
    }
  }

  /** A line of human output on stdout (suppressed under --json). */
  line(text = ""): void {
    if (!this.json) this.stdout.write(`${text}\n`);
  }

  /** One JSON value per line, for streamed machine output. */
  ndjson(value: unknown): void {
    this.stdout.write(`${JSON.stringify(value)}\n`);
  }

  /** Progress and notices: stderr, never stdout, and silent under --json. */
  notice(text: string): void {
    if (!this.json) this.stderr.write(text.endsWith("\n") ? text : `${text}\n`);
  }

  /** Raw write to stdout (for streaming renderers that manage their own lines). */
  write(text: string): void {
    this.stdout.write(text);
  }
}

export interface ErrorBody {
  error: { code: string; summary: string; detail: string };
}

export function errorBody(error: unknown): ErrorBody {
  if (isCaesarError(error)) return { error: error.toJSON() };
  const known = diskFullError(error);
  if (known) return { error: known.toJSON() };
  const summary = error instanceof Error ? error.message : String(error);
  return {
    error: {
      code: "internal_error",
      summary: `Internal error: ${summary}`,
      detail:
        "This is a bug in caesar. Please report it with the command you ran; set CAESAR_DEBUG=1 for a stack trace.",
    },
  };
}

/** Print an error the way the user asked for (JSON on stdout, or one clear message on stderr); return the exit code. */
export function reportError(error: unknown, json: boolean): number {
  const body = errorBody(error);
  if (json) {
    process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
  } else {
    const { summary, detail } = body.error;
    process.stderr.write(`caesar: ${summary}\n`);
    if (detail) process.stderr.write(`${indent(detail)}\n`);
  }
  if (process.env.CAESAR_DEBUG && error instanceof Error && error.stack) {
    process.stderr.write(`${error.stack}\n`);
  }
  return error instanceof CaesarError ? error.exitCode : (diskFullError(error)?.exitCode ?? EXIT_FAILURE);
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((line) => `  ${line}`)
    .join("\n");
}
