/** Why a run failed, as far as the agent's stream tells: stable codes the report and `error` events carry. */
export type FailureCode =
  | "auth_failed"
  | "rate_limited"
  | "model_unreachable"
  | "model_error"
  | "agent_error"
  | "agent_killed";

export interface Failure {
  code: FailureCode;
  message: string;
  /** The agent's own words, as they appear in the message after the reason. */
  detail: string;
}

const AUTH =
  /\b(401|403)\b|unauthori[sz]ed|authenticat|invalid[ _-]?api[ _-]?key|UNAUTHENTICATED|PERMISSION_DENIED/i;
const RATE = /\b429\b|rate[ _-]?limit|too many requests|RESOURCE_EXHAUSTED|quota/i;
const UNREACHABLE =
  /ECONNREFUSED|connection refused|could not connect|fetch failed|error sending request|waiting for network|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|network is unreachable|socket hang up/i;
const SERVER = /\b5\d\d\b|internal server error|overloaded|service unavailable/i;

/** Classify an error message (and HTTP status, when the stream gives one). */
export function classifyFailure(message: string, status?: number): FailureCode {
  if (status === 401 || status === 403) return "auth_failed";
  if (status === 429) return "rate_limited";
  if (status !== undefined && status >= 500) return "model_error";
  if (AUTH.test(message)) return "auth_failed";
  if (RATE.test(message)) return "rate_limited";
  if (UNREACHABLE.test(message)) return "model_unreachable";
  if (SERVER.test(message)) return "model_error";
  return "agent_error";
}

const LEADS: Record<FailureCode, string> = {
  auth_failed: "The model provider refused the credentials",
  rate_limited: "The model provider is rate limiting",
  model_unreachable: "The model provider could not be reached",
  model_error: "The model provider failed",
  agent_error: "The agent reported an error",
  agent_killed: "The agent was stopped",
};

/** A failure whose message starts with the reason, then the agent's own words (one line, capped). */
export function makeFailure(detail: string, status?: number, code?: FailureCode): Failure {
  const resolved = code ?? classifyFailure(detail, status);
  const words = failureWords(detail);
  return {
    code: resolved,
    message: words ? `${LEADS[resolved]}: ${words}` : LEADS[resolved],
    detail: words,
  };
}

/** An error text as a failure message carries it: one line, capped. */
export function failureWords(text: string): string {
  return text.replace(/\s+/g, " ").trim().slice(0, 500);
}
