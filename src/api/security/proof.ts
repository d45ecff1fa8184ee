import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * A server proves it holds the workspace's key before a client sends it: the client sends a fresh nonce,
 * the server answers HMAC-SHA256(key, "caesar-prove/1 <its origin> <nonce>"), and the client checks the
 * answer with the key it holds. A listener without the key (anything on the default port, a page's
 * server) learns a random nonce and nothing else; one that relays to the real server gets an answer bound
 * to the real server's origin, which the client, talking to another origin, refuses.
 */
export const PROOF_LABEL = "caesar-prove/1";
export const NONCE_PATTERN = /^[0-9a-f]{64}$/;

export function makeNonce(): string {
  return randomBytes(32).toString("hex");
}

export function proofOf(key: string, origin: string, nonce: string): string {
  return createHmac("sha256", key).update(`${PROOF_LABEL} ${origin.toLowerCase()} ${nonce}`).digest("hex");
}

/** Does `answer` prove the key for this origin and nonce? (constant time) */
export function isProof(answer: unknown, key: string, origin: string, nonce: string): boolean {
  if (typeof answer !== "string" || !/^[0-9a-f]{64}$/.test(answer)) return false;
  return timingSafeEqual(Buffer.from(answer, "hex"), Buffer.from(proofOf(key, origin, nonce), "hex"));
}
