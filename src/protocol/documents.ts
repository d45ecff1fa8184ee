import { CaesarError } from "../support/errors.js";
import type * as z from "../support/zod.js";
import { EventSchema } from "./event.js";
import { AnswerSchema, QuestionSchema } from "./questions.js";
import { ReportSchema } from "./report.js";
import { TaskSchema } from "./task.js";
import { type DocumentKind, kindOfProtocol, PROTOCOLS, parseProtocolId } from "./versions.js";

export const DOCUMENT_SCHEMAS = {
  task: TaskSchema,
  report: ReportSchema,
  event: EventSchema,
  question: QuestionSchema,
  answer: AnswerSchema,
} as const;

export type DocumentOf<K extends DocumentKind> = z.infer<(typeof DOCUMENT_SCHEMAS)[K]>;

/** One problem found in a document, with where it is: a JSON path, and a line number for JSONL. */
export interface ValidationProblem {
  line?: number;
  path: string;
  message: string;
}

export function formatProblem(problem: ValidationProblem): string {
  const where = problem.line === undefined ? problem.path : `line ${problem.line}: ${problem.path}`;
  return `${where}: ${problem.message}`;
}

/** A document that is not what it should be: unsupported protocol or invalid content. */
export class DocumentError extends CaesarError {
  readonly problems: ValidationProblem[];
  constructor(
    code: "unsupported_protocol" | "invalid_document",
    summary: string,
    problems: ValidationProblem[],
  ) {
    super(code, summary, {
      detail: problems.map(formatProblem).join("\n"),
      data: { problems },
    });
    this.name = "DocumentError";
    this.problems = problems;
  }
}

export function jsonPath(path: readonly PropertyKey[]): string {
  let out = "$";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else if (typeof key === "string" && /^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) out += `.${key}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out;
}

export function problemsOf(error: z.ZodError, line?: number): ValidationProblem[] {
  return error.issues.map((issue) => ({
    ...(line === undefined ? {} : { line }),
    path: jsonPath(issue.path),
    message: describeIssue(issue),
  }));
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === "invalid_value" && issue.values.length > 0) {
    return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
  }
  if (issue.code === "invalid_union" && "discriminator" in issue && issue.discriminator) {
    return `unknown ${issue.discriminator}; ${issue.message}`;
  }
  return issue.message;
}

/**
 * Refuse, explicitly, a document whose `protocol` is not the version we read: name what was found
 * and what is supported. Never a best-effort read.
 */
export function unsupportedProtocolProblem(
  kind: DocumentKind,
  found: unknown,
): ValidationProblem | undefined {
  const expected = PROTOCOLS[kind];
  if (found === expected) return undefined;
  if (found === undefined) {
    return { path: "$.protocol", message: `missing; expected "${expected}"` };
  }
  const parsed = parseProtocolId(found);
  if (parsed && parsed.kind === expected.split(".")[1]!.split("/")[0]) {
    return {
      path: "$.protocol",
      message: `unsupported protocol version ${JSON.stringify(found)}: this caesar reads ${expected}`,
    };
  }
  return { path: "$.protocol", message: `found ${JSON.stringify(found)}, expected "${expected}"` };
}

/** Common misspellings of change actions that carry no ambiguity. */
const CHANGE_ACTION_ALIASES: Record<string, string> = {
  created: "added",
  create: "added",
  add: "added",
  new: "added",
  modify: "modified",
  updated: "modified",
  update: "modified",
  changed: "modified",
  edited: "modified",
  removed: "deleted",
  delete: "deleted",
  remove: "deleted",
  rename: "renamed",
  moved: "renamed",
};

function normalizeRawReport(raw: Record<string, unknown>): Record<string, unknown> {
  if (!Array.isArray(raw.changes)) return raw;
  const changes = raw.changes.map((change) => {
    if (!change || typeof change !== "object") return change;
    const action = (change as Record<string, unknown>).action;
    if (typeof action !== "string") return change;
    const alias = CHANGE_ACTION_ALIASES[action.toLowerCase()];
    return alias ? { ...change, action: alias } : change;
  });
  return { ...raw, changes };
}

/** At most this many rounds of null removal (a null inside a null's replacement is one more round). */
const NULL_ROUNDS = 8;

/**
 * Parse with `null` read as absent wherever the schema accepts absence: strict structured outputs (and
 * `protocol schema report --strict`, which says so) send null for every optional field. Only the nulls
 * the schema refuses are removed, so a null it accepts (`exit_code: null`) keeps its meaning; a null in a
 * required field stays an error, reported as the null it is.
 */
function parseReadingNullAsAbsent(schema: z.ZodType, input: unknown): ReturnType<z.ZodType["safeParse"]> {
  let current = input;
  const removed = new Map<string, z.core.$ZodIssue>();
  for (let round = 0; ; round++) {
    const result = schema.safeParse(current);
    if (result.success || round === NULL_ROUNDS) return withOriginalNullIssues(result, removed);
    const nulls = result.error.issues.filter(
      (issue) =>
        typeof issue.path.at(-1) === "string" &&
        !removed.has(pathKey(issue.path)) &&
        valueAt(current, issue.path) === null,
    );
    if (nulls.length === 0) return withOriginalNullIssues(result, removed);
    for (const issue of nulls) {
      removed.set(pathKey(issue.path), issue);
      current = withoutMember(current, issue.path);
    }
  }
}

/** A removed null that was required after all is reported as the original problem (`received null`). */
function withOriginalNullIssues(
  result: ReturnType<z.ZodType["safeParse"]>,
  removed: Map<string, z.core.$ZodIssue>,
): ReturnType<z.ZodType["safeParse"]> {
  if (result.success || removed.size === 0) return result;
  for (const [index, issue] of result.error.issues.entries()) {
    const original = removed.get(pathKey(issue.path));
    if (original) result.error.issues[index] = original;
  }
  return result;
}

function pathKey(path: readonly PropertyKey[]): string {
  return JSON.stringify(path.map(String));
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const key of path) {
    if (!current || typeof current !== "object") return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

/** A copy of `value` without the member at `path` (copies only along the path). */
function withoutMember(value: unknown, path: readonly PropertyKey[]): unknown {
  if (path.length === 0 || !value || typeof value !== "object") return value;
  const [key, ...rest] = path as [PropertyKey, ...PropertyKey[]];
  const copy = (Array.isArray(value) ? [...value] : { ...value }) as Record<PropertyKey, unknown>;
  if (rest.length === 0) delete copy[key];
  else copy[key] = withoutMember(copy[key], rest);
  return copy;
}

export type ParseResult<T> =
  | { ok: true; value: T }
  | { ok: false; unsupported: boolean; problems: ValidationProblem[] };

export function safeParseDocument<K extends DocumentKind>(
  kind: K,
  raw: unknown,
  line?: number,
): ParseResult<DocumentOf<K>> {
  const at = (p: ValidationProblem): ValidationProblem => (line === undefined ? p : { ...p, line });
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) {
    return {
      ok: false,
      unsupported: false,
      problems: [at({ path: "$", message: "expected a JSON object" })],
    };
  }
  const record = raw as Record<string, unknown>;
  const protocolProblem = unsupportedProtocolProblem(kind, record.protocol);
  if (protocolProblem) return { ok: false, unsupported: true, problems: [at(protocolProblem)] };
  const input = kind === "report" ? normalizeRawReport(record) : record;
  const result = parseReadingNullAsAbsent(DOCUMENT_SCHEMAS[kind], input);
  if (result.success) return { ok: true, value: result.data as DocumentOf<K> };
  return { ok: false, unsupported: false, problems: problemsOf(result.error, line) };
}

export function parseDocument<K extends DocumentKind>(
  kind: K,
  raw: unknown,
  origin = kind as string,
): DocumentOf<K> {
  const result = safeParseDocument(kind, raw);
  if (result.ok) return result.value;
  if (result.unsupported) {
    const found = (raw as Record<string, unknown>).protocol;
    throw new DocumentError(
      "unsupported_protocol",
      `${origin} declares ${JSON.stringify(found)}; this caesar reads ${PROTOCOLS[kind]}.`,
      result.problems,
    );
  }
  throw new DocumentError(
    "invalid_document",
    `${origin} is not a valid ${PROTOCOLS[kind]} document.`,
    result.problems,
  );
}

/** Detect which document a parsed JSON value is, from its `protocol` field. */
export function detectKind(raw: unknown): DocumentKind | undefined {
  if (!raw || typeof raw !== "object") return undefined;
  return kindOfProtocol((raw as Record<string, unknown>).protocol);
}
