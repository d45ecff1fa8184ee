import { execFile } from "node:child_process";
import { findExecutable } from "../support/executable-path.js";
import type { Detection } from "./adapter.js";

/** How long `<bin> --version` may take before detection gives up (some CLIs start slowly). */
const VERSION_TIMEOUT_MS = 15_000;

/** `1.2.3` from any version banner (`codex-cli 0.171.0`, `2.1.332 (Claude Code)`, …). */
export function parseVersion(text: string): string | undefined {
  return /(\d+\.\d+\.\d+)/.exec(text)?.[1];
}

/** Negative, zero or positive as `a` is older than, equal to or newer than `b` (numeric x.y.z). */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    const diff = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}

export function runVersion(path: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve) => {
    execFile(
      path,
      args,
      { env, timeout: VERSION_TIMEOUT_MS, maxBuffer: 64 * 1024 },
      (_error, stdout, stderr) => {
        resolve(`${stdout ?? ""}\n${stderr ?? ""}`);
      },
    );
  });
}

export interface VersionedCli {
  bin: string;
  versionArgs?: string[];
  verifiedRange?: { min: string; max: string };
}

/** Find the CLI, read its version, and warn when it is outside the range the adapter was verified on. */
export async function detectCli(cli: VersionedCli, env: NodeJS.ProcessEnv = process.env): Promise<Detection> {
  const path = findExecutable(cli.bin, env);
  if (!path) return { installed: false };
  const version = parseVersion(await runVersion(path, cli.versionArgs ?? ["--version"], env));
  if (!version) return { installed: true, path, warning: `Could not read the version of ${cli.bin}` };
  const range = cli.verifiedRange;
  if (range && (compareVersions(version, range.min) < 0 || compareVersions(version, range.max) > 0)) {
    const verified = range.min === range.max ? range.min : `${range.min}–${range.max}`;
    return {
      installed: true,
      path,
      version,
      warning: `${cli.bin} ${version} is outside the verified range (${verified}): its flags or stream may have changed`,
    };
  }
  return { installed: true, path, version };
}
