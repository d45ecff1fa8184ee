import { randomBytes } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { link, lstat, mkdir, open, readdir, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { projectPaths } from "../../engine/store/project.js";
import { CaesarError, errnoOf } from "../../support/errors.js";

/**
 * `.caesar/state/serve/`: where a workspace's servers keep the bearer token and their address files. It is
 * the user's alone — a real directory (not a link), owned by the user, mode 0700 — and so is every file in
 * it (0600, opened without following links). Anything else is refused with what to do, never repaired
 * silently: a directory another user could read may have given the token away already.
 *
 * Permission bits mean nothing on Windows; there the checks are skipped (see docs/api.md).
 */
export const SERVE_DIR = "serve";

export function serveDir(root: string): string {
  return join(projectPaths(root).state, SERVE_DIR);
}

const CHECKED = process.platform !== "win32" && typeof process.getuid === "function";

/** Create the directory if needed (0700), then make sure it is private. */
export async function ensurePrivateDir(root: string): Promise<string> {
  const dir = serveDir(root);
  await mkdir(projectPaths(root).state, { recursive: true });
  try {
    await mkdir(dir, { mode: 0o700 });
  } catch (error) {
    if (errnoOf(error) !== "EEXIST") throw error;
  }
  await checkPrivateDir(dir);
  return dir;
}

/** The directory if it exists and is private; `undefined` when there is none yet. */
export async function existingPrivateDir(root: string): Promise<string | undefined> {
  const dir = serveDir(root);
  try {
    await checkPrivateDir(dir);
    return dir;
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return undefined;
    throw error;
  }
}

async function checkPrivateDir(dir: string): Promise<void> {
  const stats = await lstat(dir);
  const problem = describeProblem(stats, "directory");
  if (problem) throw unsafeError(dir, "directory", problem);
}

/** A private file's text, read without following a link; `undefined` when it does not exist. */
export async function readPrivateFile(path: string): Promise<string | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return undefined;
    if (errnoOf(error) === "ELOOP") throw unsafeError(path, "file", "it is a symbolic link");
    throw error;
  }
  try {
    const problem = describeProblem(await handle.stat(), "file");
    if (problem) throw unsafeError(path, "file", problem);
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}

/**
 * Write a private file (0600) complete before it appears under its name. With `exclusive`, an existing file
 * is never replaced (false is returned): a hard link is made, which fails when the name is taken.
 */
export async function writePrivateFile(
  dir: string,
  name: string,
  content: string,
  { exclusive }: { exclusive: boolean },
): Promise<boolean> {
  const temporary = join(dir, `.${name}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  const handle = await open(
    temporary,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0),
    0o600,
  );
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    if (!exclusive) {
      await rename(temporary, join(dir, name));
      return true;
    }
    try {
      await link(temporary, join(dir, name));
      return true;
    } catch (error) {
      if (errnoOf(error) === "EEXIST") return false;
      throw error;
    }
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
}

/** The names in the private directory (after checking it), or none when it does not exist. */
export async function listPrivateDir(root: string): Promise<{ dir: string; names: string[] } | undefined> {
  const dir = await existingPrivateDir(root);
  if (!dir) return undefined;
  return { dir, names: await readdir(dir) };
}

function describeProblem(stats: Stats, kind: "directory" | "file"): string | undefined {
  if (stats.isSymbolicLink()) return "it is a symbolic link";
  if (kind === "directory" && !stats.isDirectory()) return "it is not a directory";
  if (kind === "file" && !stats.isFile()) return "it is not a regular file";
  if (!CHECKED) return undefined;
  if (stats.uid !== process.getuid!()) return `it belongs to another user (uid ${stats.uid})`;
  if ((stats.mode & 0o077) !== 0) {
    return `other users have access to it (mode ${(stats.mode & 0o777).toString(8).padStart(4, "0")})`;
  }
  return undefined;
}

function unsafeError(path: string, kind: "directory" | "file", problem: string): CaesarError {
  const remedy =
    kind === "directory"
      ? `Remove it (as its owner, or root): \`rm -r ${path}\`, then start \`caesar serve\` again — it makes a new one, mode 0700, with a new token. Do not just chmod it: the token it held may have been read already.`
      : `Remove it (\`rm ${path}\`) and start \`caesar serve\` again: it writes a new one, mode 0600.`;
  return new CaesarError(
    kind === "directory" ? "unsafe_private_dir" : "unsafe_private_file",
    `Refusing to use ${path}: ${problem}.`,
    {
      detail: `caesar keeps the server's bearer token there, so only you may be able to open it: a real ${kind} (not a link), owned by you, that no other user can read or write. ${remedy}`,
    },
  );
}
