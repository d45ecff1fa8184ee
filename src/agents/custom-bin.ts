import { existsSync } from "node:fs";
import { isAbsolute, join } from "node:path";

/**
 * A custom agent's `bin`:
 * - `./x`, `../x`, or any relative path with a slash: relative to the project root;
 * - a bare name: the file of that name beside the configuration file that declares it, when there is one
 *   (`bin = "my-agent.sh"` next to `.caesar/config.toml`, as OACP's own example writes it), else a name
 *   looked up on PATH;
 * - an absolute path, as it is.
 */
export function resolveCustomBin(bin: string, projectRoot: string, declaredIn?: string): string {
  if (isAbsolute(bin)) return bin;
  if (bin.includes("/")) return join(projectRoot, bin);
  if (declaredIn !== undefined && existsSync(join(declaredIn, bin))) return join(declaredIn, bin);
  return bin;
}
