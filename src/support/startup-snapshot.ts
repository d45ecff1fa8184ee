import { existsSync, readFileSync, realpathSync } from "node:fs";
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
  packageRoot: string;
  /** V8 flags the snapshots were built with: they must be given again when starting from them. */
  flags: string[];
}

export type SnapshotCheck = { usable: true; meta: SnapshotMeta } | { usable: false; reason: string };

/** Can this snapshot start a process here, and if not, why (for `caesar doctor`)? */
export function checkSnapshot(name: SnapshotName, env: NodeJS.ProcessEnv = process.env): SnapshotCheck {
  const reason = unusableReason(name, env);
  if (typeof reason === "string") return { usable: false, reason };
  return { usable: true, meta: reason };
}

function unusableReason(name: SnapshotName, env: NodeJS.ProcessEnv): string | SnapshotMeta {
  if (env.CAESAR_NO_SNAPSHOT === "1") return "turned off by CAESAR_NO_SNAPSHOT=1";
  // V8 flags in NODE_OPTIONS would not match the snapshot's (Node refuses to start from it then).
  if (env.NODE_OPTIONS?.trim()) return "NODE_OPTIONS is set";
  let meta: SnapshotMeta;
  try {
    meta = JSON.parse(readFileSync(SNAPSHOT_META, "utf8")) as SnapshotMeta;
  } catch {
    return `no snapshot was built (${SNAPSHOT_META} is missing or unreadable); run \`npm run build\``;
  }
  if (meta.version !== 1) return "the snapshot was built by another version of caesar; run `npm run build`";
  if (meta.node !== process.version || meta.v8 !== process.versions.v8)
    return `built with Node ${meta.node}, running ${process.version}; run \`npm run build\``;
  if (meta.arch !== process.arch || meta.platform !== process.platform) return "built on another platform";
  if (meta.packageRoot !== PACKAGE_ROOT.replace(/\/$/, ""))
    return `built for ${meta.packageRoot}; run \`npm run build\``;
  let execPath = process.execPath;
  try {
    execPath = realpathSync(execPath);
  } catch {
    // keep the path as given
  }
  if (meta.execPath !== execPath) return `built with ${meta.execPath}, running ${execPath}`;
  if (!existsSync(blobPath(name))) return `${blobPath(name)} is missing; run \`npm run build\``;
  return meta;
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
