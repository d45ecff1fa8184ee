import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/**
 * What an agent's processes may touch, as mounts over a read-only view of the machine. The sandbox's
 * backend turns it into the operating system's rules (bwrap.ts); nothing here is enforced by caesar
 * itself.
 */
export interface SandboxProfile {
  /**
   * Paths under the private /tmp that stay visible, read-only: the project when it lives there, the
   * agent's program, its home, its PATH.
   */
  visible: string[];
  /** Directories (or files) the agent may write, bound read-write at their own path. */
  writable: string[];
  /** Paths bound read-only over what `writable` opens (caesar's own files inside a writable folder). */
  readOnly: string[];
  /** Directories hidden behind an empty tmpfs: unreadable, their contents invisible. */
  hidden: string[];
  /**
   * Folders of caesar's bound inside (the broker's socket, the egress proxy's): `source` → `target`,
   * read-only when so marked (a Unix socket on a read-only mount still connects).
   */
  binds: { source: string; target: string; readOnly?: boolean }[];
  /** No network namespace of the host: no network at all, loopback included. */
  network: boolean;
  /** Empty folders made in the private /tmp (the agent's TMPDIR when it is one there). */
  tmpDirs?: string[];
}

export interface ProfileInput {
  mode: "read-only" | "write";
  network: boolean;
  /** Where the agent works (a worktree, or the project for an in-place task). */
  workspace: string;
  /** The task directory: the agent writes its report, events, questions and scratch files there. */
  taskDir: string;
  /** caesar's files in the task directory, bound read-only over it (they exist when the agent starts). */
  taskFiles: string[];
  /** caesar's control directory (`<git common dir>/caesar`): its records, other tasks' environments. */
  controlDir: string;
  /** A worktree task's registration in the git common directory (`worktrees/<name>`): git writes there. */
  worktreeGitDir: string | null;
  /** Paths inside a writable workspace that stay read-only (an in-place task's `.git`, `.caesar`). */
  protectedInWorkspace: string[];
  /** Extra writable folders the agent's CLI needs (its per-run home under the task's runtime/). */
  extraWritable: string[];
  /** Where the broker's socket folder is bound inside, if the task has one. */
  broker: { source: string; target: string } | null;
  /** Folders of the user's that hold credentials, hidden unless configured otherwise. */
  secrets?: string[];
  /**
   * Folders of the project that hold other tasks' files and the server's key (`.caesar/tasks`, `.caesar/wt`,
   * `.caesar/state`): hidden, the task's own directory and workspace bound again inside.
   */
  othersFiles?: string[];
  /** What the agent must still see under the private /tmp (only paths there are kept). */
  visible?: string[];
}

/** Credential folders of the user's never readable by an agent (unless configured). */
export function defaultSecretPaths(home = homedir()): string[] {
  return [
    ".ssh",
    ".aws",
    ".gnupg",
    ".config/gcloud",
    ".azure",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".config/gh",
    ".npmrc",
  ].map((path) => join(home, path));
}

/**
 * The profile of one run of an agent:
 * - everything read-only, `/tmp` private (bwrap.ts);
 * - write task: its workspace (an in-place task's `.git` and `.caesar` excepted) and its worktree's
 *   registration in git; read-only task: nothing in the workspace;
 * - the task directory writable (report, events, questions, scratch), caesar's own files in it not;
 * - caesar's control directory hidden (the records that decide, other tasks' environments, the service's
 *   socket), the project's folders of other tasks and of the server's key, and the user's credential folders;
 * - the network only when the task has it.
 */
export function makeProfile(input: ProfileInput): SandboxProfile {
  const writable = [input.taskDir, ...input.extraWritable];
  const readOnly = [...input.taskFiles];
  if (input.mode === "write") {
    writable.push(input.workspace);
    if (input.worktreeGitDir) writable.push(input.worktreeGitDir);
    readOnly.push(...input.protectedInWorkspace);
  } else {
    // Read-only already (under the read-only root), named so that it is bound again inside a hidden folder.
    readOnly.unshift(input.workspace);
  }
  const privateTmp = (path: string) =>
    ["/tmp", "/run", "/var/run"].some((top) => path === top || path.startsWith(`${top}/`));
  const hidden = [
    input.controlDir,
    ...(input.othersFiles ?? []),
    ...(input.secrets ?? defaultSecretPaths()),
  ].filter((path) => existsSync(path));
  return {
    visible: [...new Set(input.visible ?? [])].filter(
      (path) => privateTmp(path) && !["/tmp", "/run", "/var/run"].includes(path) && existsSync(path),
    ),
    writable: writable.filter((path) => existsSync(path)),
    readOnly: readOnly.filter((path) => existsSync(path)),
    // A folder inside another hidden one is hidden with it, and left out: its own empty mount, covered by the
    // outer one's, would be gone when bubblewrap makes it read-only (outside git, the control directory is
    // `.caesar/state/control`, inside the project's hidden `.caesar/state`).
    hidden: [...new Set(hidden)].filter(
      (path) => !hidden.some((outer) => outer !== path && path.startsWith(`${outer}/`)),
    ),
    binds: input.broker ? [input.broker] : [],
    network: input.network,
  };
}
