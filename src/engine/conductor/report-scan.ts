import { formatProblem, safeParseDocument } from "../../protocol/documents.js";
import type { Report } from "../../protocol/report.js";
import { PROTOCOLS } from "../../protocol/versions.js";

const FENCE = /```json[ \t]+caesar:report[^\n]*\n([\s\S]*?)```/g;
const MAX_SCAN_CHARS = 2 * 1024 * 1024;
const MAX_CANDIDATES = 64;

/** What a scan of the agent's output found: the report it keeps, and the candidates it had to skip. */
export interface ScanResult {
  report?: Report;
  /** Candidates examined (latest first) that were not valid reports, with why. */
  rejected: RejectedCandidate[];
}

export interface RejectedCandidate {
  /** The candidate's text, as found (to tell the same object met by two scans). */
  text: string;
  problems: string[];
}

/** The last ```json caesar:report fenced block of the text that holds a valid report. */
export function findFencedReport(text: string): ScanResult {
  const rejected: RejectedCandidate[] = [];
  for (const match of [...tail(text).matchAll(FENCE)].reverse()) {
    const body = match[1]!.trim();
    const parsed = tryJson(body);
    if (!parsed.ok) {
      rejected.push({ text: body, problems: [`not valid JSON: ${parsed.error}`] });
      continue;
    }
    const result = safeParseDocument("report", parsed.value);
    if (result.ok) return { report: result.value, rejected };
    rejected.push({ text: body, problems: result.problems.map(formatProblem) });
  }
  return { rejected };
}

/** The last JSON object in the text that declares itself `caesar.report/v1` and is a valid report. */
export function findSelfDeclaredReport(text: string): ScanResult {
  const scanned = tail(text);
  const marker = `"${PROTOCOLS.report}"`;
  const rejected: RejectedCandidate[] = [];
  let at = scanned.lastIndexOf(marker);
  let candidates = 0;
  while (at !== -1 && candidates < MAX_CANDIDATES) {
    // Try each opening brace before the marker, nearest first: the report encloses its protocol field.
    let open = scanned.lastIndexOf("{", at);
    let tries = 0;
    let declaring: RejectedCandidate | undefined;
    while (open !== -1 && tries < 16) {
      const object = balancedObjectAt(scanned, open);
      if (object !== undefined && open + object.length > at) {
        const parsed = tryJson(object);
        if (parsed.ok) {
          const result = safeParseDocument("report", parsed.value);
          if (result.ok) return { report: result.value, rejected };
          // Only an object whose own `protocol` is the report's declares itself one.
          if ((parsed.value as { protocol?: unknown } | null)?.protocol === PROTOCOLS.report)
            declaring ??= { text: object, problems: result.problems.map(formatProblem) };
        }
      }
      open = scanned.lastIndexOf("{", open - 1);
      tries += 1;
    }
    if (declaring) rejected.push(declaring);
    at = scanned.lastIndexOf(marker, at - 1);
    candidates += 1;
  }
  return { rejected };
}

/** The JSON object text starting at `start` (a `{`), with strings and escapes respected. */
export function balancedObjectAt(text: string, start: number): string | undefined {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === "\\") i += 1;
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') inString = true;
    else if (char === "{") depth += 1;
    else if (char === "}") {
      depth -= 1;
      if (depth === 0) return text.slice(start, i + 1);
    }
  }
  return undefined;
}

function tail(text: string): string {
  return text.length > MAX_SCAN_CHARS ? text.slice(-MAX_SCAN_CHARS) : text;
}

function tryJson(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}
