import { open, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { randomHex } from "./random.js";

function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomHex(4)}.tmp`);
}

export interface AtomicWriteOptions {
  /** Flush to disk before the rename (default true); a copy that can be rebuilt may skip it. */
  sync?: boolean;
  /**
   * The file's permissions, exactly, whatever the umask (default 0600: caesar's records and task files are
   * the user's alone); set on the temp file before anything is in it.
   */
  mode?: number;
  /** A file meant to be shared like any the user makes (a configuration): 0644 less the umask. */
  shared?: boolean;
}

/**
 * Write `content` to a hidden temp file beside `path` (same folder, so a rename or a link to `path` is
 * atomic), flushed to disk. Returns its path; the caller renames or links it into place.
 */
export async function writeTempBeside(
  path: string,
  content: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<string> {
  const temp = tempPathFor(path);
  const mode = options.shared === true ? 0o644 : (options.mode ?? 0o600);
  const handle = await open(temp, "wx", mode);
  try {
    if (options.shared !== true) await handle.chmod(mode);
    await handle.writeFile(content);
    if (options.sync !== false) await handle.sync();
  } catch (error) {
    await handle.close().catch(() => {});
    await rm(temp, { force: true });
    throw error;
  }
  await handle.close();
  return temp;
}

/**
 * Write a file atomically: a temp file in the same folder, flushed, then renamed over the target.
 * A reader sees the old content or the new one, never half of it; a crash leaves at most a stray
 * `.<name>.<pid>.<rand>.tmp` beside it.
 */
export async function writeFileAtomic(
  path: string,
  content: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const temp = await writeTempBeside(path, content, options);
  try {
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

export async function writeJsonAtomic(
  path: string,
  value: unknown,
  options: AtomicWriteOptions = {},
): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(value, null, 2)}\n`, options);
}
