import { existsSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { findExecutable as findOnPath } from "../../support/executable-path.js";

export type FoundExecutable = { ok: true; path: string } | { ok: false; error: NodeJS.ErrnoException };

/**
 * Where `bin` is, as spawning it from `cwd` with `PATH` would find it — with the error spawn would give
 * (ENOENT, EACCES) when it cannot be run. The agent's keeper is a shell, which would only say "not found"
 * on its stderr: the program is looked up first, so a task says which program could not start.
 */
export function findExecutable(bin: string, path: string, cwd: string): FoundExecutable {
  const named = bin.includes("/") ? (isAbsolute(bin) ? bin : resolve(cwd, bin)) : bin;
  const found = findOnPath(bin, { PATH: path }, cwd);
  if (found) return { ok: true, path: found };
  const exists = bin.includes("/") && existsSync(named);
  const code = exists ? "EACCES" : "ENOENT";
  const error: NodeJS.ErrnoException = new Error(
    `${code === "EACCES" ? "permission denied" : "not found"}: ${bin}${bin.includes("/") ? "" : " (looked up on PATH)"}`,
  );
  error.code = code;
  error.path = bin;
  error.syscall = "spawn";
  return { ok: false, error };
}
