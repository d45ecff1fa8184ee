import { lstat, mkdir, rm, symlink, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { CommandLine } from "./adapter.js";

/**
 * Write what a command line needs on disk before launch: its per-run files (private: they may carry
 * configuration with keys) and its symbolic links. Paths are the adapter's, inside the run's directory.
 */
export async function writeLaunchFiles(command: CommandLine): Promise<void> {
  for (const path of command.outputs ?? []) await rm(path, { force: true });
  for (const file of command.files ?? []) {
    await mkdir(dirname(file.path), { recursive: true, mode: 0o700 });
    await writeFile(file.path, file.content, { mode: 0o600 });
  }
  for (const link of command.links ?? []) {
    await mkdir(dirname(link.path), { recursive: true, mode: 0o700 });
    const existing = await lstat(link.path).catch(() => undefined);
    if (existing) await rm(link.path, { recursive: true, force: true });
    await symlink(link.target, link.path);
  }
}
