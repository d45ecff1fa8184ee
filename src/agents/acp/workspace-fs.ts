import { lstat, mkdir, open, readFile, realpath, rename, rm } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { randomHex } from "../../support/random.js";

/** Largest file `fs/read_text_file` serves (an agent reading a huge artefact gets an error, not our memory). */
export const MAX_READ_BYTES = 16 * 1024 * 1024;

/** A path the policy refuses: outside every root it may touch. */
export class PathRefusedError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`Refused ${path}: ${reason}`);
    this.name = "PathRefusedError";
  }
}

/** A file that does not exist (the agent checks whether it may create it). */
export class PathMissingError extends Error {
  constructor(readonly path: string) {
    super(`No such file: ${path}`);
    this.name = "PathMissingError";
  }
}

/** Is `child` the directory `parent` itself or inside it (both already resolved)? */
export function isInside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

/**
 * Where a path really is: symbolic links resolved as far as the path exists (a file still to be created is
 * resolved through its nearest existing ancestor). A link inside the workspace that points outside it is
 * therefore outside.
 */
export async function resolveReal(path: string): Promise<string> {
  const absolute = resolve(path);
  const missing: string[] = [];
  let current = absolute;
  for (;;) {
    try {
      const real = await realpath(current);
      return missing.length === 0 ? real : join(real, ...missing.reverse());
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") throw error;
      const parent = dirname(current);
      if (parent === current) return absolute;
      missing.push(basename(current));
      current = parent;
    }
  }
}

/**
 * The files an ACP agent may read and write through its client (`fs/read_text_file`,
 * `fs/write_text_file`): inside the given roots only, symbolic links resolved, absolute paths only.
 */
export class WorkspaceFiles {
  private readonly realRoots: Promise<{ read: string[]; write: string[]; writeFiles: string[] }>;

  /** `writeFiles`: single files writable outside the write roots (the report). */
  constructor(roots: { read: string[]; write: string[]; writeFiles?: string[] }) {
    const real = (paths: string[]) => Promise.all(paths.map((path) => resolveReal(path)));
    this.realRoots = Promise.all([real(roots.read), real(roots.write), real(roots.writeFiles ?? [])]).then(
      ([read, write, writeFiles]) => ({ read, write, writeFiles }),
    );
  }

  /** The resolved path, if it lies inside one of the roots for this access; otherwise a refusal. */
  async check(path: string, access: "read" | "write"): Promise<string> {
    if (typeof path !== "string" || !isAbsolute(path)) {
      throw new PathRefusedError(String(path), "ACP file paths must be absolute");
    }
    const all = await this.realRoots;
    const roots = all[access];
    const real = await resolveReal(path);
    if (roots.some((root) => isInside(root, real))) return real;
    if (access === "write" && all.writeFiles.includes(real)) return real;
    const allowed = access === "write" ? [...roots, ...all.writeFiles] : roots;
    const where =
      allowed.length === 0 ? "nothing may be written in this task" : `allowed: ${allowed.join(", ")}`;
    throw new PathRefusedError(path, `outside what this task may ${access} (${where})`);
  }

  /** `line` is 1-based; `limit` is a number of lines. */
  async read(path: string, line?: number | null, limit?: number | null): Promise<string> {
    const real = await this.check(path, "read");
    let stats: Awaited<ReturnType<typeof lstat>>;
    try {
      stats = await lstat(real);
    } catch {
      throw new PathMissingError(path);
    }
    if (!stats.isFile()) throw new PathRefusedError(path, "not a regular file");
    if (stats.size > MAX_READ_BYTES) {
      throw new PathRefusedError(path, `larger than ${MAX_READ_BYTES} bytes`);
    }
    const text = await readFile(real, "utf8");
    if (!line && !limit) return text;
    const lines = text.split("\n");
    const start = Math.max(0, (line ?? 1) - 1);
    const end = limit ? start + Math.max(0, limit) : lines.length;
    return lines.slice(start, end).join("\n");
  }

  /**
   * Write through a temporary file renamed into place: a symbolic link at the target is replaced, never
   * followed, and a reader never sees half a file.
   */
  async write(path: string, content: string): Promise<void> {
    const real = await this.check(path, "write");
    const existing = await lstat(real).catch(() => undefined);
    if (existing && !existing.isFile()) throw new PathRefusedError(path, "not a regular file");
    // Missing directories are created: they lie under the nearest existing ancestor, checked above.
    await mkdir(dirname(real), { recursive: true });
    const temp = join(dirname(real), `.${basename(real)}.caesar-${randomHex(4)}.tmp`);
    let handle: Awaited<ReturnType<typeof open>> | undefined;
    try {
      // wx: never through an existing file or link of that name.
      handle = await open(temp, "wx", existing ? existing.mode & 0o777 : 0o644);
      await handle.writeFile(content, "utf8");
      await handle.close();
      handle = undefined;
      await rename(temp, real);
    } catch (error) {
      await handle?.close().catch(() => undefined);
      await rm(temp, { force: true });
      throw error;
    }
  }
}
