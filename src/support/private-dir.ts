import { chmodSync, lstatSync, mkdirSync } from "node:fs";
import { chmod, lstat, mkdir } from "node:fs/promises";

/**
 * caesar's own directories — task directories, the control directory, `.caesar/state/` — are the user's
 * alone: 0700 whatever the umask, so another account reads no raw.log, report or record. One that an older
 * caesar made 0755 is narrowed when caesar next writes there (only a real directory the user owns: a link
 * is never followed to change what it points at).
 */
export const PRIVATE_DIR_MODE = 0o700;
/** Files caesar writes in them. */
export const PRIVATE_FILE_MODE = 0o600;

const OWNER = typeof process.getuid === "function" ? process.getuid() : undefined;

function ownsDir(stats: { isDirectory(): boolean; uid: number }): boolean {
  return stats.isDirectory() && (OWNER === undefined || stats.uid === OWNER);
}

/** Create `path` (and its missing parents) 0700, and narrow it to 0700 if it already existed. */
export async function makePrivateDir(path: string): Promise<void> {
  await mkdir(path, { recursive: true, mode: PRIVATE_DIR_MODE });
  const stats = await lstat(path);
  if (ownsDir(stats) && (stats.mode & 0o777) !== PRIVATE_DIR_MODE) await chmod(path, PRIVATE_DIR_MODE);
}

export function makePrivateDirSync(path: string): void {
  mkdirSync(path, { recursive: true, mode: PRIVATE_DIR_MODE });
  const stats = lstatSync(path);
  if (ownsDir(stats) && (stats.mode & 0o777) !== PRIVATE_DIR_MODE) chmodSync(path, PRIVATE_DIR_MODE);
}
