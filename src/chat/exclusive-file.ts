import { link, rename, rm, stat } from "node:fs/promises";
import { writeTempBeside } from "../support/atomic-file.js";
import { errnoOf } from "../support/errors.js";

/**
 * Files that must appear whole and never overwrite anything (`_meta.json`, message files): the
 * content goes to a hidden temp file in the same folder, is flushed, then is hard-linked to its
 * name. `link` fails with EEXIST instead of replacing, and the name shows the whole file or nothing.
 */

/** Write `content` to a hidden temp file beside `path` (its name starts with `.`, so never a message). */
export const writeTempFile: (path: string, content: string) => Promise<string> = writeTempBeside;

// File systems without hard links answer one of these.
const NO_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS", "EMLINK"]);

/**
 * Give the temp file its final name; false when a file of that name already exists. The temp file
 * is gone afterwards either way.
 */
export async function commitTempFile(temp: string, path: string): Promise<boolean> {
  try {
    await link(temp, path);
    return true;
  } catch (error) {
    const code = errnoOf(error);
    if (code === "EEXIST") return false;
    if (code !== undefined && NO_LINKS.has(code)) return renameUnlessExists(temp, path);
    throw error;
  } finally {
    await rm(temp, { force: true });
  }
}

// Without hard links, check-then-rename: exclusive only under a lock the caller holds.
async function renameUnlessExists(temp: string, path: string): Promise<boolean> {
  try {
    await stat(path);
    return false;
  } catch (error) {
    if (errnoOf(error) !== "ENOENT") throw error;
  }
  await rename(temp, path);
  return true;
}

/** Create `path` with `content`, whole or not at all; false (and nothing written) when it exists. */
export async function writeFileExclusive(path: string, content: string): Promise<boolean> {
  return commitTempFile(await writeTempFile(path, content), path);
}
