import { spawnSync } from "node:child_process";
import { lstatSync, statSync } from "node:fs";
import { userInfo } from "node:os";
import { delimiter, isAbsolute } from "node:path";
import { findExecutable } from "../support/executable-path.js";
import type { SandboxProfile } from "./profile.js";

/** The user the agent is inside: the caller's own uid, or 1000 for root (root inside could remount). */
export function insideUid(uid = userInfo().uid): number {
  return uid === 0 ? 1000 : uid;
}

/**
 * bubblewrap's arguments for a profile, before the agent's command. Every rule is the kernel's:
 * - a user namespace of its own, the agent a non-root user in it with no capability (`--cap-drop ALL`):
 *   it cannot remount what is read-only nor unmount what hides a folder — not even from a nested
 *   namespace of its own, whose mounts the kernel locks;
 * - its own pid namespace (and /proc): no other process of the machine is visible (their environments
 *   neither); its own IPC and host name; a private /tmp;
 * - the whole file system read-only, a private /tmp and /run (what the agent needs there bound again,
 *   read-only; the host's runtime sockets stay out of reach),
 *   the profile's writable folders bound read-write, caesar's files bound read-only over them, the hidden
 *   folders replaced by empty ones (a hidden file by /dev/null);
 * - no network namespace of the host when the task has no network (nothing, loopback included);
 * - it dies with its keeper (agent-process.ts), so nothing of it outlives a task stopped with SIGKILL.
 */
export function bwrapArgs(profile: SandboxProfile, cwd: string, uid = insideUid()): string[] {
  const args = [
    "--unshare-user",
    "--uid",
    String(uid),
    "--gid",
    String(uid),
    "--cap-drop",
    "ALL",
    "--unshare-pid",
    "--unshare-ipc",
    "--unshare-uts",
    "--die-with-parent",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--tmpfs",
    "/tmp",
    // The host's runtime sockets (the D-Bus session bus, docker's, ssh and gpg agents, caesar's own service
    // socket under $XDG_RUNTIME_DIR): a Unix socket on the file system still connects without a network.
    "--tmpfs",
    "/run",
  ];
  if (hasOwnVarRun()) args.push("--tmpfs", "/var/run");
  if (!profile.network) args.push("--unshare-net");
  for (const path of profile.tmpDirs ?? []) args.push("--dir", path);
  // Mounts stack in this order: what stays visible under /tmp, what is writable, caesar's files over it,
  // then what is hidden (inside any of them), then the broker's folder (inside the hidden control folder).
  for (const path of profile.visible) args.push("--ro-bind", path, path);
  for (const path of profile.writable) args.push("--bind", path, path);
  for (const path of profile.readOnly) args.push("--ro-bind", path, path);
  const hiddenDirs = profile.hidden.filter(isDirectory);
  for (const path of profile.hidden) {
    if (hiddenDirs.includes(path)) args.push("--tmpfs", path);
    else args.push("--ro-bind", "/dev/null", path);
  }
  // What of the task's own lies inside a hidden folder (its directory among the other tasks'), bound again.
  const insideHidden = (path: string) => hiddenDirs.some((dir) => path.startsWith(`${dir}/`));
  for (const path of profile.writable.filter(insideHidden)) args.push("--bind", path, path);
  for (const path of profile.readOnly.filter(insideHidden)) args.push("--ro-bind", path, path);
  for (const bind of profile.binds)
    args.push(bind.readOnly ? "--ro-bind" : "--bind", bind.source, bind.target);
  // A hidden folder is empty and stays so: nothing can be written there either.
  for (const path of hiddenDirs) args.push("--remount-ro", path);
  args.push("--chdir", cwd, "--");
  return args;
}

/** /var/run is a folder of its own (not the usual link to /run), so hiding /run does not hide it. */
function hasOwnVarRun(): boolean {
  try {
    return lstatSync("/var/run").isDirectory();
  } catch {
    return false;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export interface BwrapProbe {
  available: boolean;
  /** The bwrap found, or why none can run here. */
  detail: string;
  version?: string;
  /** Its absolute path, as found on PATH once: every sandbox of this process runs that one. */
  path?: string;
}

/** The first executable `name` in an absolute directory of PATH (never one relative to where caesar runs). */
function onPath(name: string, path = process.env.PATH ?? ""): string | undefined {
  return findExecutable(name, { PATH: path.split(delimiter).filter(isAbsolute).join(delimiter) });
}

let probed: BwrapProbe | undefined;

/**
 * Can bubblewrap sandbox an agent here, with the profile's own flags? Tried once per process: a sandbox
 * that starts `true`. Where it cannot (not installed, user namespaces disabled or restricted), why.
 */
export function probeBwrap(): BwrapProbe {
  if (probed) return probed;
  const path = onPath("bwrap");
  const version = path
    ? spawnSync(path, ["--version"], { encoding: "utf8", timeout: 5_000 })
    : { error: new Error("not found"), status: null, stdout: "", stderr: "" };
  if (!path || version.error || version.status !== 0) {
    probed = {
      available: false,
      detail:
        "bubblewrap is not installed (Debian, Ubuntu: `apt install bubblewrap`; Fedora: `dnf install bubblewrap`)",
    };
    return probed;
  }
  const profile: SandboxProfile = {
    visible: [],
    writable: [],
    readOnly: [],
    hidden: [],
    binds: [],
    network: false,
  };
  const trial = spawnSync(path, [...bwrapArgs(profile, "/"), "true"], {
    encoding: "utf8",
    timeout: 10_000,
  });
  const versionText = version.stdout.trim();
  probed =
    trial.status === 0
      ? {
          available: true,
          detail: `${versionText} (user, pid, ipc and network namespaces)`,
          version: versionText,
          path,
        }
      : {
          available: false,
          detail: `${versionText} cannot create a sandbox here: ${(trial.stderr || trial.error?.message || `exit ${trial.status}`).trim()} (unprivileged user namespaces must be allowed: sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu 24.04 an AppArmor profile for bwrap)`,
          version: versionText,
        };
  return probed;
}
