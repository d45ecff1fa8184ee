import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { projectPaths } from "../../engine/store/project.js";
import { errnoOf } from "../../support/errors.js";

export const TOKEN_FILE = "serve-token";
/** Shorter secrets are refused: a token protects every mutation of the workspace. */
export const MIN_TOKEN_LENGTH = 32;

export function tokenPath(root: string): string {
  return join(projectPaths(root).state, TOKEN_FILE);
}

/**
 * The workspace's mutation token: `.caesar/state/serve-token` (mode 0600), created with 32 random bytes the
 * first time a server needs it, then reused, so a page or a script keeps working across restarts.
 */
export async function loadOrCreateToken(root: string): Promise<string> {
  const path = tokenPath(root);
  try {
    const existing = (await readFile(path, "utf8")).trim();
    if (existing.length >= MIN_TOKEN_LENGTH) return existing;
  } catch (error) {
    if (errnoOf(error) !== "ENOENT") throw error;
  }
  await mkdir(projectPaths(root).state, { recursive: true });
  const token = randomBytes(32).toString("hex");
  try {
    await writeFile(path, `${token}\n`, { mode: 0o600, flag: "wx" });
    return token;
  } catch (error) {
    if (errnoOf(error) !== "EEXIST") throw error;
  }
  // Another process created it first, or it held a too-short value: read it or replace the short one.
  const raced = (await readFile(path, "utf8")).trim();
  if (raced.length >= MIN_TOKEN_LENGTH) return raced;
  await writeFile(path, `${token}\n`, { mode: 0o600 });
  await chmod(path, 0o600);
  return token;
}

/** Compare a presented token with the expected one in constant time (hashing first evens the lengths). */
export function tokenMatches(presented: string, expected: string): boolean {
  const a = createHash("sha256").update(presented).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}
