import { lstat, mkdir, rm, symlink, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, sep } from "node:path";
import { CaesarError } from "../support/errors.js";
import type { CommandLine } from "./adapter.js";

/**
 * Write what a command line needs on disk before launch: its per-run files (private: they may carry
 * configuration with keys) and its symbolic links. Paths are the adapter's, inside the run's directory.
 *
 * `within` (the task directory) is the agent's to write between runs: a folder of it that became a link
 * (its CLI's home of the task's pointed at the user's own) would have caesar write or remove through it.
 * Every folder from `within` down to each path must be a plain folder, and what is at the path itself is
 * removed before it is written (never followed).
 */
export async function writeLaunchFiles(command: CommandLine, within?: string): Promise<void> {
  const paths = [
    ...(command.outputs ?? []),
    ...(command.files ?? []).map((file) => file.path),
    ...(command.links ?? []).map((link) => link.path),
  ];
  if (within) for (const path of paths) await assertPlainFolders(within, path);
  for (const path of command.outputs ?? []) await rm(path, { force: true });
  for (const file of command.files ?? []) {
    await mkdir(dirname(file.path), { recursive: true, mode: 0o700 });
    if (within) await removeUnlessFile(file.path);
    await writeFile(file.path, file.content, { mode: 0o600 });
  }
  for (const link of command.links ?? []) {
    await mkdir(dirname(link.path), { recursive: true, mode: 0o700 });
    const existing = await lstat(link.path).catch(() => undefined);
    if (existing) await rm(link.path, { recursive: true, force: true });
    await symlink(link.target, link.path);
  }
}

async function assertPlainFolders(within: string, path: string): Promise<void> {
  const rel = relative(within, dirname(path));
  if (rel.startsWith("..") || isAbsolute(rel)) return;
  let current = within;
  for (const part of rel.split(sep).filter(Boolean)) {
    current = join(current, part);
    const info = await lstat(current).catch(() => undefined);
    if (!info) return; // made by mkdir, as a plain folder
    if (!info.isDirectory())
      throw new CaesarError(
        "unsafe_task_file",
        `${current} is not a plain folder (a link?): caesar does not write through it.`,
        {
          detail: `The task's agent can write its task directory, and ${current} is where caesar puts its CLI's files for the next run. Remove it (or the task) and run again.`,
        },
      );
  }
}

/** A link, a hard link or anything but a regular file where a file goes is removed, never written through. */
async function removeUnlessFile(path: string): Promise<void> {
  const info = await lstat(path).catch(() => undefined);
  if (info && (!info.isFile() || info.nlink > 1)) await rm(path, { recursive: true, force: true });
}
