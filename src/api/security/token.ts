import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { lstat, rm } from "node:fs/promises";
import { join } from "node:path";
import { projectPaths } from "../../engine/store/project.js";
import { CaesarError } from "../../support/errors.js";
import {
  ensurePrivateDir,
  existingPrivateDir,
  readPrivateFile,
  serveDir,
  writePrivateFile,
} from "./private-dir.js";

export const TOKEN_FILE = "token";
/** Shorter secrets are refused: a token protects every mutation of the workspace. */
export const MIN_TOKEN_LENGTH = 32;
/** Where 0.1 kept the token (a file any page on this machine could obtain through GET /api/session). */
const LEGACY_TOKEN_FILE = "serve-token";

export function tokenPath(root: string): string {
  return join(serveDir(root), TOKEN_FILE);
}

/**
 * The workspace's bearer token: `.caesar/state/serve/token` (0600, in a 0700 directory), created with 32
 * random bytes the first time a server needs it, then shared by every server of the workspace — each reads
 * the file again when a token is presented, so a rotation (`rotateToken`) takes effect in all of them. A
 * file that is not private is refused, never used.
 */
export async function loadOrCreateToken(root: string): Promise<string> {
  const dir = await ensurePrivateDir(root);
  await removeLegacyToken(root);
  const existing = (await readPrivateFile(join(dir, TOKEN_FILE)))?.trim();
  if (existing !== undefined && existing.length >= MIN_TOKEN_LENGTH) return existing;
  const token = randomBytes(32).toString("hex");
  // Exclusive when there is none, so two servers starting together agree on one; a damaged one is replaced.
  if (await writePrivateFile(dir, TOKEN_FILE, `${token}\n`, { exclusive: existing === undefined })) {
    return token;
  }
  return loadOrCreateToken(root);
}

/**
 * Replace the workspace's token by a new one (`caesar serve --rotate`, and every start of `caesar serve`
 * unless `--pin-token`): a token that leaked stops working everywhere at once.
 */
export async function rotateToken(root: string): Promise<string> {
  const dir = await ensurePrivateDir(root);
  await removeLegacyToken(root);
  const token = randomBytes(32).toString("hex");
  await writePrivateFile(dir, TOKEN_FILE, `${token}\n`, { exclusive: false });
  return token;
}

/** The token for a client (`caesar serve login`): read, never created. */
export async function readToken(root: string): Promise<string> {
  const dir = await existingPrivateDir(root);
  const token = dir ? (await readPrivateFile(join(dir, TOKEN_FILE)))?.trim() : undefined;
  if (token === undefined || token.length < MIN_TOKEN_LENGTH) {
    throw new CaesarError("no_token", `No server token in ${tokenPath(root)}.`, {
      detail: "Start `caesar serve` in this workspace first: it creates the token.",
    });
  }
  return token;
}

/**
 * The 0.1 token file lay beside the task store and was handed to any local page: it is no longer accepted,
 * and is removed so that a credential nothing checks does not linger. (A link is removed, not followed.)
 */
async function removeLegacyToken(root: string): Promise<void> {
  const path = join(projectPaths(root).state, LEGACY_TOKEN_FILE);
  const stats = await lstat(path).catch(() => undefined);
  if (stats && (stats.isFile() || stats.isSymbolicLink())) await rm(path, { force: true });
}

/** Compare a presented secret with the expected one in constant time (hashing first evens the lengths). */
export function tokenMatches(presented: string, expected: string): boolean {
  const a = createHash("sha256").update(presented).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}
