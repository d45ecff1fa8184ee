import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { CommandLine, LaunchContext } from "./adapter.js";

/**
 * A CLI's own state for one task under caesar's OS sandbox, where everything of the user's is read-only:
 * a fresh home under the task's runtime folder (inside the task directory, which the sandbox binds
 * writable), seeded from the user's configuration and credentials. What the CLI only reads (credentials,
 * settings) is linked — read-only inside, never copied; a file it rewrites as it runs is copied. Sessions,
 * logs, caches and helper binaries go to the fresh home and are removed with the task.
 */
export interface SandboxHome {
  /** The CLI's writable home (e.g. `CODEX_HOME`). */
  home: string;
  env: Record<string, string>;
  files: { path: string; content: string }[];
  links: { path: string; target: string }[];
}

export interface SeedEntry {
  /** The entry's name, relative to the user's folder and to the new home. */
  name: string;
  /** `link` (read by the CLI only) or `copy` (a file the CLI rewrites). */
  how: "link" | "copy";
}

/**
 * A per-task home `runtime/<name>`: `seeds` taken from `userDir` where they exist, plus a cache and
 * state folder of its own (XDG_CACHE_HOME, XDG_STATE_HOME) — the user's are read-only inside, and the
 * CLIs (copilot unpacks itself into its cache) and the commands they run (npm, pip) write there.
 */
export function sandboxHome(
  launch: LaunchContext,
  name: string,
  userDir: string,
  seeds: SeedEntry[],
): SandboxHome {
  const home = join(launch.runtimeDir, name);
  const made = { home, env: {}, files: [], links: [] } as SandboxHome;
  for (const seed of seeds) seedInto(made, home, userDir, seed);
  made.env.XDG_CACHE_HOME = join(launch.runtimeDir, "xdg", "cache");
  made.env.XDG_STATE_HOME = join(launch.runtimeDir, "xdg", "state");
  // Folders the CLI expects to exist (a file inside makes writeLaunchFiles create them).
  made.files.push({ path: join(home, ".caesar-sandbox-home"), content: `${launch.task.id}\n` });
  for (const dir of [made.env.XDG_CACHE_HOME, made.env.XDG_STATE_HOME])
    made.files.push({ path: join(dir, ".caesar-sandbox-home"), content: `${launch.task.id}\n` });
  return made;
}

/** Add one of the user's entries to `target` (a home being seeded), when the user has it. */
export function seedInto(target: SandboxHome, into: string, from: string, seed: SeedEntry): void {
  const source = join(from, seed.name);
  if (!existsSync(source)) return;
  const path = join(into, seed.name);
  if (seed.how === "link") {
    target.links.push({ path, target: source });
    return;
  }
  try {
    target.files.push({ path, content: readFileSync(source, "utf8") });
  } catch {
    // a folder or an unreadable file: the CLI starts without it
  }
}

/** The user's folder a CLI reads its state from: its variable when set, else under the home. */
export function userStateDir(launch: LaunchContext, variable: string | null, underHome: string): string {
  const set = variable ? launch.env[variable] : undefined;
  if (set) return set;
  return join(launch.env.HOME || homedir(), underHome);
}

/** Merge a sandbox home into a command line: its variables, files and links added to the adapter's. */
export function withSandboxHome(command: CommandLine, home: SandboxHome): CommandLine {
  return {
    ...command,
    env: { ...command.env, ...home.env },
    files: [...(command.files ?? []), ...home.files],
    links: [...(command.links ?? []), ...home.links],
  };
}
