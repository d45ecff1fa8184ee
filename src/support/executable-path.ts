import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";

/**
 * Where a program named `bin` is, as spawning it would find it: `bin` itself when it is a path (relative to
 * `cwd`), else the first executable file of that name in the directories of `env.PATH`. Undefined when
 * there is none (or it is not an executable file).
 */
export function findExecutable(
  bin: string,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): string | undefined {
  const candidates = bin.includes("/")
    ? [resolve(cwd, bin)]
    : (env.PATH ?? "")
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(isAbsolute(dir) ? dir : resolve(cwd, dir), bin));
  for (const candidate of candidates) {
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not there, or not executable
    }
  }
  return undefined;
}
