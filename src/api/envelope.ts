import { jsonPath } from "../protocol/documents.js";
import type { ThrownCode } from "../support/errors.js";
import type * as z from "../support/zod.js";
import { ApiError, type RequestIssue } from "./api-error.js";
import { MAX_BODY_BYTES } from "./protocol-ids.js";

/**
 * Read a request body as JSON, within the size limit, and only when it says it is JSON. Every failure is
 * a 4xx naming the problem; nothing here can throw anything else.
 */
export async function readJsonBody(request: Request): Promise<unknown> {
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    throw new ApiError(
      "unsupported_media_type",
      `Expected a JSON body (Content-Type: application/json), got ${JSON.stringify(type || "none")}.`,
      "Send the envelope as JSON with Content-Type: application/json.",
    );
  }
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > MAX_BODY_BYTES) throw tooLarge();
  const bytes = await readLimited(request).catch((error) => {
    if (error instanceof ApiError) throw error;
    throw new ApiError("invalid_json", "The request body could not be read.", "Send the whole body.");
  });
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new ApiError("invalid_json", "The request body is not valid UTF-8.", "Send UTF-8 JSON.");
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ApiError(
      "invalid_json",
      "The request body is not valid JSON.",
      `${(error as Error).message}. Send one JSON object: the request envelope.`,
    );
  }
}

/** The body, read as it streams in and abandoned as soon as it passes the limit (no Content-Length needed). */
async function readLimited(request: Request): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array();
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge();
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

function tooLarge(): ApiError {
  return new ApiError(
    "body_too_large",
    `The request body exceeds ${MAX_BODY_BYTES} bytes.`,
    "Envelopes are small; send less.",
  );
}

/**
 * Validate a parsed body against an envelope schema. Failures are 400, with the zod issues as
 * `{path, message}` and a code naming the first kind of problem: `unsupported_protocol`,
 * `unknown_operation`, `unknown_field`, `invalid_argument` or `invalid_envelope`.
 */
export function parseEnvelope<S extends z.ZodType>(
  schema: S,
  raw: unknown,
  context: {
    protocol: string;
    operations: readonly string[];
    schemaPath: string;
    /** Fields renamed in this vocabulary, old name → what to send now: a caller sending one is told. */
    formerNames?: Readonly<Record<string, string>>;
  },
): z.infer<S> {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const issues: RequestIssue[] = result.error.issues.map((issue) => ({
    path: jsonPath(issue.path),
    message: issue.message,
  }));
  const first = (predicate: (issue: z.core.$ZodIssue) => boolean) => result.error.issues.find(predicate);
  const at = (issue: z.core.$ZodIssue, key: string) => issue.path[0] === key;
  const record =
    raw && typeof raw === "object" && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const see = `The schema is at GET ${context.schemaPath}.`;
  if (first((issue) => at(issue, "protocol"))) {
    return fail(
      "unsupported_protocol",
      `Expected protocol "${context.protocol}", got ${describe(record.protocol)}.`,
    );
  }
  if (first((issue) => at(issue, "operation"))) {
    return fail(
      "unknown_operation",
      `Unknown operation ${describe(record.operation)}: expected one of ${context.operations.join(", ")}.`,
    );
  }
  const unknown = first((issue) => issue.code === "unrecognized_keys");
  if (unknown && unknown.code === "unrecognized_keys") {
    const renamed = unknown.keys
      .filter((key) => context.formerNames?.[key])
      .map((key) => `${key} is now ${context.formerNames![key]}.`);
    return fail(
      "unknown_field",
      `Unknown field(s) at ${jsonPath(unknown.path)}: ${unknown.keys.join(", ")}.`,
      [...renamed, see].join(" "),
    );
  }
  const argument = first((issue) => at(issue, "arguments"));
  if (argument) {
    return fail("invalid_argument", `Invalid argument at ${jsonPath(argument.path)}: ${argument.message}.`);
  }
  const other = result.error.issues[0]!;
  return fail("invalid_envelope", `Invalid envelope at ${jsonPath(other.path)}: ${other.message}.`);

  function fail(code: ThrownCode, summary: string, detail = see): never {
    throw new ApiError(code, summary, detail, issues);
  }
}

function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
