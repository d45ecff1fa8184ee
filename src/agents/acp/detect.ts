import { readFileSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { findExecutable } from "../../support/executable-path.js";
import type { Detection } from "../adapter.js";
import { compareVersions } from "../version.js";

/**
 * Detect an ACP agent that has no version flag (codex-acp exits on `--version`, claude-agent-acp starts
 * serving): the version is read from the npm package that installed the executable, when it is one.
 */
export function detectFromPackage(
  cli: { bin: string; packageName: string; verified: string },
  env: NodeJS.ProcessEnv = process.env,
): Detection {
  const path = findExecutable(cli.bin, env);
  if (!path) return { installed: false };
  const version = packageVersion(path, cli.packageName);
  if (!version) {
    return {
      installed: true,
      path,
      warning: `Could not read the version of ${cli.bin} (not installed from npm package ${cli.packageName})`,
    };
  }
  if (compareVersions(version, cli.verified) !== 0) {
    return {
      installed: true,
      path,
      version,
      warning: `${cli.bin} ${version} is outside the verified range (${cli.verified}): its flags or session may have changed`,
    };
  }
  return { installed: true, path, version };
}

function packageVersion(executable: string, packageName: string): string | undefined {
  let dir: string;
  try {
    dir = dirname(realpathSync(executable));
  } catch {
    return undefined;
  }
  for (let depth = 0; depth < 4; depth++) {
    try {
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === packageName && typeof manifest.version === "string") return manifest.version;
    } catch {
      // not here: look one folder up
    }
    dir = dirname(dir);
  }
  return undefined;
}
