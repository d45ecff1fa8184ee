import { updateState } from "../store/task-store.js";

export { TASK_TOKEN_ENV } from "../../protocol/task-dir.js";

/**
 * Give a task's agent its credentials: 32 random bytes from node:crypto, handed to the agent process only
 * (its environment), never written anywhere; caesar's record of the task keeps their SHA-256. A nested
 * request proves which task it comes from by presenting them (see engine/lifecycle/caller.ts).
 */
export async function issueTaskToken(dir: string): Promise<string> {
  // Loaded here, not at start-up: OpenSSL costs every process that loads it some memory and time.
  const { randomBytes } = await import("node:crypto");
  const token = randomBytes(32).toString("base64url");
  const hash = await hashTaskToken(token);
  await updateState(dir, (state) => ({ ...state, token_sha256: hash }));
  return token;
}

export async function hashTaskToken(token: string): Promise<string> {
  const { createHash } = await import("node:crypto");
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** Constant-time comparison of two hex digests. */
export async function isSameDigest(a: string, b: string): Promise<boolean> {
  const { timingSafeEqual } = await import("node:crypto");
  const left = Buffer.from(a, "utf8");
  const right = Buffer.from(b, "utf8");
  return left.length === right.length && timingSafeEqual(left, right);
}
