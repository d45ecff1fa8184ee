import { readFileSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { PACKAGE_ROOT } from "./package-paths.js";

/**
 * V8 startup snapshots of caesar's two processes (the CLI and the conductor), built by `npm run build`
 * into dist/snapshot/ with the Node that ran the build. Starting from one skips loading and evaluating
 * caesar's code: a process is ready about as fast as a bare `node`. A snapshot only loads in the exact
 * Node (version, V8, build) and V8 flags it was made with, and it holds the paths of the package where it
 * was built, so it is used only when all of these still match; otherwise caesar starts from its ES
 * module bundles, which always work. `CAESAR_NO_SNAPSHOT=1` turns snapshots off.
 */
export const SNAPSHOT_DIR = join(PACKAGE_ROOT, "dist", "snapshot");
export const SNAPSHOT_META = join(SNAPSHOT_DIR, "meta.json");

export type SnapshotName = "cli" | "conductor";

/** What the build recorded beside the blobs: what must match for them to load. */
export interface SnapshotMeta {
  version: 1;
  node: string;
  v8: string;
  arch: string;
  platform: string;
  /** The Node binary that built the snapshots (real path). */
  execPath: string;
  /** Its modification time then (a Node replaced in place is another build). */
  execMtimeMs: number;
  packageRoot: string;
  /** V8 flags the snapshots were built with: they must be given again when starting from them. */
  flags: string[];
  /** Each blob's size in bytes: a truncated blob would crash Node, not just fail to load. */
  sizes: Record<SnapshotName, number>;
}

export type SnapshotCheck = { usable: true; meta: SnapshotMeta } | { usable: false; reason: string };

const unusable = (reason: string): SnapshotCheck => ({ usable: false, reason });

/** Can this snapshot start a process here, and if not, why (for `caesar doctor`)? */
export function checkSnapshot(name: SnapshotName, env: NodeJS.ProcessEnv = process.env): SnapshotCheck {
  if (env.CAESAR_NO_SNAPSHOT === "1") return unusable("turned off by CAESAR_NO_SNAPSHOT=1");
  // V8 flags in NODE_OPTIONS would not match the snapshot's (Node refuses to start from it then).
  if (env.NODE_OPTIONS?.trim()) return unusable("NODE_OPTIONS is set");
  const rebuild = "; run `npm run build`";
  let meta: SnapshotMeta;
  try {
    meta = JSON.parse(readFileSync(SNAPSHOT_META, "utf8")) as SnapshotMeta;
  } catch {
    return unusable(`no snapshot was built (${SNAPSHOT_META} is missing or unreadable)${rebuild}`);
  }
  if (meta.version !== 1) return unusable(`the snapshot was built by another version of caesar${rebuild}`);
  if (meta.node !== process.version || meta.v8 !== process.versions.v8)
    return unusable(`built with Node ${meta.node}, running ${process.version}${rebuild}`);
  if (meta.arch !== process.arch || meta.platform !== process.platform)
    return unusable(`built on another platform${rebuild}`);
  if (meta.packageRoot !== PACKAGE_ROOT.replace(/\/$/, ""))
    return unusable(`built for ${meta.packageRoot}${rebuild}`);
  let node: { path: string; mtimeMs: number };
  try {
    const path = realpathSync(process.execPath);
    node = { path, mtimeMs: statSync(path).mtimeMs };
  } catch {
    return unusable(`cannot inspect ${process.execPath}`);
  }
  if (meta.execPath !== node.path)
    return unusable(`built with ${meta.execPath}, running ${node.path}${rebuild}`);
  // The same path and version, but another build of Node (replaced in place): its V8 may differ.
  if (meta.execMtimeMs !== node.mtimeMs) return unusable(`${node.path} changed since the build${rebuild}`);
  let size: number;
  try {
    size = statSync(blobPath(name)).size;
  } catch {
    return unusable(`${blobPath(name)} is missing${rebuild}`);
  }
  if (size !== meta.sizes?.[name]) return unusable(`${blobPath(name)} is not the one built${rebuild}`);
  return { usable: true, meta };
}

export function blobPath(name: SnapshotName): string {
  return join(SNAPSHOT_DIR, `${name}.blob`);
}

/**
 * The Node arguments that start `script` from its snapshot (`--snapshot-blob <blob> <flags> <script>`),
 * or just `[script]` when the snapshot cannot be used. `script` is the matching ES module entry point:
 * the process sees it as `argv[1]` either way.
 */
export function nodeArgsFor(
  name: SnapshotName,
  script: string,
  env: NodeJS.ProcessEnv = process.env,
): string[] {
  const check = checkSnapshot(name, env);
  return check.usable ? ["--snapshot-blob", blobPath(name), ...check.meta.flags, script] : [script];
}
