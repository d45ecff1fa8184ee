import { readFile } from "node:fs/promises";
import { CaesarError } from "../support/errors.js";
import { detectKind, formatProblem, safeParseDocument, type ValidationProblem } from "./documents.js";
import { LineBuffer } from "./jsonl.js";
import { type DocumentKind, PROTOCOLS, parseProtocolId } from "./versions.js";

export interface FileValidation {
  file: string;
  kind: DocumentKind | "events" | "unknown";
  valid: boolean;
  /** Number of JSONL lines checked (events files only). */
  lines?: number;
  problems: ValidationProblem[];
  warnings: ValidationProblem[];
}

/**
 * Validate a document file, detecting its kind from `protocol`: one JSON object (task, report, question,
 * answer) or a JSONL stream of events. Every problem is reported with where it is, not just the first.
 */
export async function validateFile(file: string): Promise<FileValidation> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new CaesarError("file_unreadable", `Cannot read ${file}.`, {
      detail: `${(error as Error).message}. Check the path and its permissions.`,
      cause: error,
    });
  }
  return validateText(file, text);
}

/** validateFile on a text already read (`file` names it in what is reported). */
export function validateText(file: string, text: string): FileValidation {
  const whole = tryParse(text);
  if (whole.ok && whole.value && typeof whole.value === "object" && !Array.isArray(whole.value)) {
    return validateObject(file, whole.value as Record<string, unknown>);
  }
  if (looksLikeJsonl(text)) return validateEvents(file, text);
  const message = whole.ok ? "expected a JSON object or JSON lines" : `not valid JSON: ${whole.error}`;
  return { file, kind: "unknown", valid: false, problems: [{ path: "$", message }], warnings: [] };
}

function validateObject(file: string, raw: Record<string, unknown>): FileValidation {
  const kind = detectKind(raw);
  if (kind === "event") {
    return validateEvents(file, `${JSON.stringify(raw)}\n`);
  }
  if (!kind) {
    return { file, kind: "unknown", valid: false, problems: [unknownProtocol(raw.protocol)], warnings: [] };
  }
  const result = safeParseDocument(kind, raw);
  return { file, kind, valid: result.ok, problems: result.ok ? [] : result.problems, warnings: [] };
}

function validateEvents(file: string, text: string): FileValidation {
  const buffer = new LineBuffer();
  const lines = buffer.push(text);
  const problems: ValidationProblem[] = [];
  const warnings: ValidationProblem[] = [];
  let count = 0;
  lines.forEach((line, index) => {
    const lineNo = index + 1;
    if (line.trim() === "") return;
    count += 1;
    const parsed = tryParse(line);
    if (!parsed.ok) {
      problems.push({ line: lineNo, path: "$", message: `not valid JSON: ${parsed.error}` });
      return;
    }
    const result = safeParseDocument("event", parsed.value, lineNo);
    if (!result.ok) problems.push(...result.problems);
  });
  const rest = buffer.rest;
  if (rest.trim() !== "") {
    const lineNo = lines.length + 1;
    const parsed = tryParse(rest);
    if (parsed.ok) {
      count += 1;
      const result = safeParseDocument("event", parsed.value, lineNo);
      if (!result.ok) problems.push(...result.problems);
      warnings.push({ line: lineNo, path: "$", message: "last line has no terminating newline" });
    } else {
      // A writer that is still running may be in the middle of this line: tolerated, but said.
      warnings.push({
        line: lineNo,
        path: "$",
        message: "last line is incomplete (no newline yet); ignored — the writer may still be running",
      });
    }
  }
  return { file, kind: "events", valid: problems.length === 0, lines: count, problems, warnings };
}

function unknownProtocol(found: unknown): ValidationProblem {
  const supported = Object.values(PROTOCOLS).join(", ");
  if (found === undefined) {
    return {
      path: "$.protocol",
      message: `missing; cannot tell which document this is (supported: ${supported})`,
    };
  }
  const parsed = parseProtocolId(found);
  const family = parsed
    ? Object.values(PROTOCOLS).find((id) => id.startsWith(`caesar.${parsed.kind}/`))
    : undefined;
  if (family) {
    return {
      path: "$.protocol",
      message: `unsupported protocol version ${JSON.stringify(found)}: this caesar reads ${family}`,
    };
  }
  return {
    path: "$.protocol",
    message: `unknown protocol ${JSON.stringify(found)} (supported: ${supported})`,
  };
}

function looksLikeJsonl(text: string): boolean {
  const first = text.trimStart();
  return first.startsWith("{") && text.trim().includes("\n");
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}

export function renderValidation(result: FileValidation): string {
  const what = result.kind === "events" ? `events (${result.lines ?? 0} lines)` : result.kind;
  const lines: string[] = [];
  if (result.valid) lines.push(`${result.file}: valid ${what}`);
  else {
    const n = result.problems.length;
    lines.push(`${result.file}: invalid ${what} — ${n} problem${n === 1 ? "" : "s"}`);
    for (const problem of result.problems) lines.push(`  ${formatProblem(problem)}`);
  }
  for (const warning of result.warnings) lines.push(`  warning: ${formatProblem(warning)}`);
  return lines.join("\n");
}
