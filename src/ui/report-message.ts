import { PROTOCOLS } from "../protocol/versions.js";

/** The part of a report a line needs. */
export interface ReportGist {
  status: string;
  summary: string;
}

const FENCE_PATTERN = /```[ \t]*(?:json)?[ \t]*(?:caesar:report)?[ \t]*\n([\s\S]*?)\n[ \t]*```/g;

/**
 * When an agent's message is itself a serialized `caesar.report/v1` — the whole message, or a fenced
 * block in it (agents asked for a report often print it as their last message) — its status and
 * summary, so a screen shows the gist rather than a page of JSON.
 */
export function reportInMessage(text: string): ReportGist | undefined {
  const trimmed = text.trim();
  if (!trimmed.includes(PROTOCOLS.report)) return undefined;
  const direct = gistOf(trimmed);
  if (direct) return direct;
  for (const match of trimmed.matchAll(FENCE_PATTERN)) {
    const gist = gistOf(match[1]!.trim());
    if (gist) return gist;
  }
  return undefined;
}

function gistOf(candidate: string): ReportGist | undefined {
  if (!candidate.startsWith("{")) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(candidate);
  } catch {
    return undefined;
  }
  if (!value || typeof value !== "object") return undefined;
  const record = value as Record<string, unknown>;
  if (record.protocol !== PROTOCOLS.report) return undefined;
  if (typeof record.status !== "string" || typeof record.summary !== "string") return undefined;
  return { status: record.status, summary: record.summary };
}
