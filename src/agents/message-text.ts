import { PROTOCOLS } from "../protocol/versions.js";
import { rec, str } from "./stream-json.js";

/** Longest message text an event carries; the full text stays in raw.log. */
export const MESSAGE_MAX = 16 * 1024;

const FENCED_REPORT = /```json[ \t]+caesar:report[ \t]*\n[\s\S]*?```/g;

/**
 * The text a person watching should see for an agent message. A message that is itself a serialized
 * report (codex --output-schema, claude structured output) shows as `Report (status): summary`, not as
 * a wall of JSON; a fenced `caesar:report` block inside a message is shortened the same way.
 */
export function displayMessage(text: string): string {
  const report = reportIn(text.trim());
  if (report) return describeReport(report);
  const replaced = text.replace(FENCED_REPORT, (block) => {
    const body = block.replace(/^```json[ \t]+caesar:report[ \t]*\n/, "").replace(/```$/, "");
    const inner = reportIn(body.trim());
    return inner ? `[${describeReport(inner)}]` : block;
  });
  return replaced.length <= MESSAGE_MAX
    ? replaced
    : `${replaced.slice(0, MESSAGE_MAX)}… (truncated; see raw.log)`;
}

function reportIn(text: string): Record<string, unknown> | undefined {
  if (!text.startsWith("{") || !text.endsWith("}")) return undefined;
  try {
    const value = rec(JSON.parse(text));
    return value.protocol === PROTOCOLS.report && typeof value.summary === "string" ? value : undefined;
  } catch {
    return undefined;
  }
}

function describeReport(report: Record<string, unknown>): string {
  const status = str(report.status) ?? "unknown";
  return `Report (${status}): ${str(report.summary) ?? ""}`;
}
