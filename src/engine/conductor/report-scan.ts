import { safeParseDocument } from "../../protocol/documents.js";
import type { Report } from "../../protocol/report.js";
import { PROTOCOLS } from "../../protocol/versions.js";

const FENCE = /```json[ \t]+caesar:report[^\n]*\n([\s\S]*?)```/g;
const MAX_SCAN_CHARS = 2 * 1024 * 1024;
const MAX_CANDIDATES = 64;

/** The last ```json caesar:report fenced block of the text that holds a valid report. */
export function findFencedReport(text: string): Report | undefined {
  const matches = [...tail(text).matchAll(FENCE)].reverse();
  for (const match of matches) {
    const parsed = tryJson(match[1]!);
    const result = safeParseDocument("report", parsed);
    if (result.ok) return result.value;
  }
  return undefined;
}

/** The last JSON object in the text that declares itself `caesar.report/v1` and is a valid report. */
export function findSelfDeclaredReport(text: string): Report | undefined {
  const scanned = tail(text);
  const marker = `"${PROTOCOLS.report}"`;
  let at = scanned.lastIndexOf(marker);
  let candidates = 0;
  while (at !== -1 && candidates < MAX_CANDIDATES) {
    // Try each opening brace before the marker, nearest first: the report encloses its protocol field.
    let open = scanned.lastIndexOf("{", at);
    let tries = 0;
    while (open !== -1 && tries < 16) {
      const object = balancedObjectAt(scanned, open);
      if (object !== undefined && open + object.length > at) {
        const result = safeParseDocument("report", tryJson(object));
        if (result.ok) return result.value;
      }
      open = scanned.lastIndexOf("{", open - 1);
      tries += 1;
    }
    at = scanned.lastIndexOf(marker, at - 1);
    candidates += 1;
  }
  return undefined;
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

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
