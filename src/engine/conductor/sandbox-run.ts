import { readFileSync, realpathSync } from "node:fs";
import { userInfo } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { keyPlaceholder } from "../../agents/key-masks.js";
import { otherCredentialFiles } from "../../agents/model-hosts.js";
import { bwrapArgs, probeBwrap } from "../../sandbox/bwrap.js";
import { hideKeys } from "../../sandbox/key-door.js";
import { defaultSecretPaths, makeProfile, type SandboxProfile } from "../../sandbox/profile.js";
import {
  EGRESS_INSIDE,
  proxyEnvironment,
  type RelayPlan,
  type RelayProgram,
  relayCommand,
  relayPlan,
} from "../../sandbox/relay.js";
import { findExecutable as findOnPath } from "../../support/executable-path.js";
import { PACKAGE_ROOT } from "../../support/package-paths.js";
import { controlPaths, findGitCommonDir } from "../store/control.js";
import { projectPaths } from "../store/project.js";
import type { TaskState } from "../store/state.js";
import type { TaskPlan } from "../store/task-plan.js";
import { CHECKS_DIR } from "./checks.js";

/**
 * The files of a task directory that are caesar's: bound read-only over the writable task directory.
 * Not `state.json`: caesar replaces that mirror (a rename) each time the state changes, and a bind holds
 * the file it found, not the name — the agent then sees the new file, writable. Nothing decides from
 * it (caesar's record is in the control directory, hidden): a rewrite is found, recorded and undone.
 */
const CAESAR_FILES = ["task.json", "plan.json", "raw.log", "conductor.log", CHECKS_DIR, "attempts"];

/** The files of a worktree's registration that say where its repository and worktree are, and its config. */
const REGISTRATION_PINS = ["commondir", "gitdir", "config.worktree"];

export interface SandboxedCommand {
  bin: string;
  args: string[];
  env: Record<string, string>;
}

/** A sandboxed task's egress proxy, as its agent's command needs it: its folder and forwarded ports. */
export interface EgressDoor {
  folder: string;
  ports: number[];
  /** Its agent's masked keys' doors, in the same folder (task-egress.ts). */
  keys?: KeyDoorInside[];
}

/** A key door as the agent's command needs it: its socket, and the variables it gets pointed at it. */
export interface KeyDoorInside {
  /** Its socket's name in the egress folder. */
  socket: string;
  /** The variable naming the provider's base URL: the door's address inside. */
  urlVariable: string;
  /** Each key's variable → the placeholder the agent gets instead. */
  placeholders: Record<string, string>;
  taskId: string;
}

/** The sandboxed task's doors out: its broker's socket (to caesar) and its egress proxy (to the network). */
export interface SandboxDoors {
  broker?: string | undefined;
  egress?: EgressDoor | undefined;
  /**
   * Where its masked keys' values are read from, when not from the command's environment: a check's has
   * none of the keys' variables (checks.ts), but may hold a key under another name, masked as the agent's is.
   */
  keysFrom?: Record<string, string> | undefined;
}

/**
 * The agent's command inside its OS sandbox, when its plan has one: `bwrap <profile> -- <command>`. The
 * keeper (agent-process.ts) stays outside it, so it can record the exit status wherever the agent cannot
 * write. Inside, `/tmp` is the sandbox's own (TMPDIR points there). With an egress proxy, the sandbox has
 * no network of the host's: a relay serves the proxy (and the forwarded loopback ports) on its own
 * loopback, the agent's HTTP(S)_PROXY pointing there (sandbox/relay.ts).
 */
export function sandboxCommand(
  plan: TaskPlan,
  state: Pick<TaskState, "workspace" | "worktree">,
  dir: string,
  command: { bin: string; args: string[]; cwd: string },
  env: Record<string, string>,
  doors: SandboxDoors = {},
  product = "",
): SandboxedCommand {
  if (plan.sandbox.backend !== "bwrap") return { bin: command.bin, args: command.args, env };
  const profile = profileOf(plan, state, dir, env, command.bin, doors.broker, product);
  // The private /tmp, or a folder of it the adapter chose (codex: one that is no prefix of its home).
  const tmp = privateTmpDir(env.TMPDIR);
  if (tmp !== "/tmp") profile.tmpDirs = [tmp];
  let agent = [command.bin, ...command.args];
  let proxyEnv: Record<string, string> = {};
  if (doors.egress) {
    const relay = relayProgram(env);
    const keyDoors = doors.egress.keys ?? [];
    const relayed = relayPlan(
      doors.egress.ports,
      keyDoors.map((door) => door.socket),
    );
    profile.network = false;
    profile.binds.push({ source: doors.egress.folder, target: EGRESS_INSIDE, readOnly: true });
    profile.visible.push(...visibleUnderTmp([dirname(relay.path)]));
    agent = relayCommand(relayed, relay, agent);
    proxyEnv = { ...proxyEnvironment(relayed), ...maskedKeys(keyDoors, relayed, env, doors.keysFrom) };
  }
  return {
    bin: probeBwrap().path ?? "bwrap",
    args: [...bwrapArgs(profile, command.cwd), ...agent],
    env: { ...withoutProxyCredentials(env, proxyEnv), ...proxyEnv, TMPDIR: tmp },
  };
}

/**
 * Each key a door masks, as the agent gets it: its placeholder, and its provider's base URL the door's
 * address on the sandbox's loopback. Only a key whose value is the one the door was opened for (the task's
 * environment; an adapter setting its own is left as it is, and reaches its provider through the proxy).
 */
function maskedKeys(
  keyDoors: readonly KeyDoorInside[],
  relayed: RelayPlan,
  env: Record<string, string>,
  keysFrom: Record<string, string> = env,
): Record<string, string> {
  const masked: Record<string, string> = {};
  const hidden: [key: string, placeholder: string][] = [];
  for (const [index, door] of keyDoors.entries()) {
    const served = relayed.served[index]!;
    let any = false;
    for (const [variable, placeholder] of Object.entries(door.placeholders)) {
      const key = keysFrom[variable];
      if (key === undefined || keyPlaceholder(door.taskId, variable, key) !== placeholder) continue;
      hidden.push([key, placeholder]);
      if (env[variable] !== key) continue;
      masked[variable] = placeholder;
      any = true;
    }
    if (any) masked[door.urlVariable] = `http://127.0.0.1:${served.port}`;
  }
  // The same key under another name (GOOGLE_API_KEY beside GEMINI_API_KEY, a header of
  // ANTHROPIC_CUSTOM_HEADERS) is masked too: as a whole value, or inside one when it is long enough to be
  // no other text's.
  for (const [name, value] of Object.entries(env)) {
    if (name in masked) continue;
    const text = hideKeys(value, hidden);
    if (text !== value) masked[name] = text;
  }
  return masked;
}

/**
 * The agent's variables behind caesar's egress proxy, less each other variable naming a proxy with its
 * credentials (`ALL_PROXY`, `FTP_PROXY`, `npm_config_https_proxy`… = `http://user:password@gateway`): the
 * machine's proxy is not the agent's to reach, nor are its credentials its to read.
 */
function withoutProxyCredentials(
  env: Record<string, string>,
  proxyEnv: Record<string, string>,
): Record<string, string> {
  if (Object.keys(proxyEnv).length === 0) return env;
  return Object.fromEntries(
    Object.entries(env).filter(
      ([name, value]) => !(/proxy/i.test(name) && /(^|:\/\/)[^/?#\s@]*@/.test(value.trim())),
    ),
  );
}

/** socat where the machine has it (about 4.5 MiB per task); else a relay of Node's own (about 40 MiB). */
function relayProgram(env: Record<string, string>): RelayProgram {
  const socat = findOnPath("socat", { PATH: env.PATH ?? process.env.PATH ?? "" });
  return socat ? { kind: "socat", path: socat } : { kind: "node", path: process.execPath };
}

function visibleUnderTmp(paths: string[]): string[] {
  return paths.filter((path) => path.startsWith("/tmp/"));
}

/** TMPDIR inside: a plain folder of the private /tmp when the agent's environment names one, else /tmp. */
function privateTmpDir(asked: string | undefined): string {
  if (!asked || !/^\/tmp\/\.?[A-Za-z0-9_-]+$/.test(asked)) return "/tmp";
  return asked;
}

export function profileOf(
  plan: TaskPlan,
  state: Pick<TaskState, "workspace" | "worktree">,
  dir: string,
  env: Record<string, string>,
  program: string,
  broker?: string,
  product = "",
): SandboxProfile {
  const workspace = state.workspace;
  const registration = state.worktree ? registrationOf(state.worktree) : null;
  const protectedInWorkspace =
    state.worktree === null
      ? [join(plan.repo_top ?? workspace, ".git"), join(plan.root, ".caesar")].filter((path) =>
          isInside(path, workspace),
        )
      : // In its registration the agent's git writes HEAD, the index, logs and its objects folder
        // (task-objects.ts); what tells git where the repository is stays read-only: caesar runs git there.
        registration
        ? REGISTRATION_PINS.map((name) => join(registration, name))
        : [];
  const profile = makeProfile({
    mode: plan.mode,
    // With an egress proxy the network is cut here and opened by the proxy (sandboxCommand); a plan of a
    // caesar without one keeps the host's network unless the sandbox cut it.
    network: plan.network || !plan.sandbox.cuts_network,
    workspace,
    taskDir: dir,
    taskFiles: CAESAR_FILES.map((name) => join(dir, name)),
    controlDir: controlPaths(plan.root).dir,
    worktreeGitDir: registration,
    protectedInWorkspace,
    extraWritable: [],
    // The user's credential folders, under the agent's home and under the account's own.
    // The other CLIs' sign-in files too: an agent gets its own provider's credentials only.
    secrets: [
      ...new Set([
        ...defaultSecretPaths(env.HOME),
        ...defaultSecretPaths(userInfo().homedir),
        ...otherCredentialFiles(product, env, [
          ...new Set([env.HOME ?? userInfo().homedir, userInfo().homedir]),
        ]),
      ]),
    ],
    // Other tasks' directories and worktrees, and the project's state (the server's key among it).
    othersFiles: [
      projectPaths(plan.root).tasks,
      projectPaths(plan.root).worktrees,
      projectPaths(plan.root).state,
    ],
    // Its broker's folder, bound where it is: inside the hidden control directory, the one thing there.
    broker: broker ? { source: dirname(broker), target: dirname(broker) } : null,
    // Under the private /tmp, what the agent still needs to read: the project (the user's checkout and the
    // other tasks' folders stay read-only), its program, caesar's own package (the bundled reference agent's
    // script, the `caesar` its nested requests run — a clone in /tmp), its home (its CLI's settings), its PATH.
    visible: [
      plan.root,
      dirname(program),
      PACKAGE_ROOT.replace(/\/+$/, ""),
      ...(env.HOME ? [env.HOME] : []),
      ...(env.PATH ?? "").split(":"),
    ].filter(Boolean),
  });
  return profile;
}

/**
 * A worktree's registration in the git common directory (`worktrees/<name>`, where git keeps its index and
 * HEAD), found from caesar's record of where the common directory is — never from the worktree's `.git`
 * file, which the agent can rewrite — and only when it points back at this worktree.
 */
function registrationOf(worktree: string): string | null {
  const common = findGitCommonDir(resolve(worktree, ".."));
  if (!common) return null;
  const registration = join(common, "worktrees", basename(worktree));
  try {
    const back = readFileSync(join(registration, "gitdir"), "utf8").trim();
    return realpathSync(back) === realpathSync(join(worktree, ".git")) ? registration : null;
  } catch {
    return null;
  }
}

function isInside(path: string, folder: string): boolean {
  const full = resolve(path);
  const base = resolve(folder);
  return full === base || full.startsWith(`${base}/`);
}
