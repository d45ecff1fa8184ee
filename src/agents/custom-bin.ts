import { join } from "node:path";

/** A custom agent's `bin`: `./relative` to the project; anything else is a path or a name on PATH. */
export function resolveCustomBin(bin: string, projectRoot: string): string {
  return bin.startsWith("./") || bin.startsWith("../") ? join(projectRoot, bin) : bin;
}
