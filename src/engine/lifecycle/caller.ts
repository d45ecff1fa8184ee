import { resolve, sep } from "node:path";
import { isGovernanceRefusal } from "../../policy/refusal-codes.js";
import { isValidTaskId } from "../../protocol/ids.js";
import { CAESAR_ENV_NAMES } from "../../protocol/task-dir.js";
import { AncestryUnprovenError, findTaskAncestor, type TaskAncestor } from "../../support/ancestry.js";
import { CaesarError } from "../../support/errors.js";
import { BROKER_CALLER_ENV, brokeredCaller } from "../conductor/broker-files.js";
import { hashTaskToken, isSameDigest, TASK_TOKEN_ENV } from "../conductor/credentials.js";
import type { TaskState } from "../store/state.js";
import { loadPlan, type TaskPlan } from "../store/task-plan.js";
import { auditMirrors, isVerifiedTask, readState, taskDirOf } from "../store/task-store.js";
import { recordRefusal } from "./refusal-record.js";

/** A task proven to be the one asking: its credentials match caesar's record, and it runs. */
export interface TaskCaller {
  kind: "task";
  id: string;
  dir: string;
  root: string;
  state: TaskState;
  plan: TaskPlan;
}

/** Who asks: a person (or a program) outside every task, or a task's agent that proved which task it is. */
export type Caller = { kind: "person" } | TaskCaller;

export const PERSON: Caller = { kind: "person" };

export interface IdentifyOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** What is being asked, for the record (`run --agent b`, `apply t_…`). */
  action: string;
  /**
   * Record a refusal against the task it can be traced to (default true). False when nothing is asked
   * yet — an MCP server finding out at start-up whom it serves — so that no refusal is on record for a
   * request nobody made; the request itself, when it comes, is identified (and recorded) again.
   */
  record?: boolean;
}

/**
 * Establish who asks, before anything is decided (principle 7: the governed cannot govern).
 *
 * - A request that names a task (`CAESAR_TASK_ID`) must prove it with the credentials caesar gave that
 *   task's agent (`CAESAR_TASK_TOKEN`, whose SHA-256 is in caesar's record of the task), the task must be
 *   running, and — where it can be seen — the process must run under that task's agent, not another's.
 * - A request without credentials from inside a task (its worktree or task directory as working
 *   directory, some of a task's variables, or a task's agent among its ancestors) is treated as nested
 *   and refused: without credentials caesar cannot tell which task asks.
 * - Anything else is a person.
 *
 * A refusal is thrown (fail closed) and recorded against the task it can be traced to.
 */
export async function identifyCaller(root: string, options: IdentifyOptions): Promise<Caller> {
  const env = options.env ?? process.env;
  const cwd = resolve(options.cwd ?? process.cwd());
  const record = options.record ?? true;
  // A command the conductor service started for a sandboxed task's broker: the channel it came through
  // named the task, and only the service (this process's parent) can say so.
  if (env[BROKER_CALLER_ENV] !== undefined) {
    const named = brokeredCaller(root, env);
    let proof: Proof = named
      ? await proveTask(root, named, undefined)
      : {
          kind: "unproven",
          reason: `${BROKER_CALLER_ENV} is set, but this process was not started by the project's conductor service or a cluster worker of this clone`,
        };
    // The task named is conducted by this very parent (its broker's owner): a worker record is a file, and
    // one an unsandboxed agent wrote for itself must not let its own command pass for another task.
    if (proof.kind === "task" && proof.state.conductor?.pid !== process.ppid)
      proof = {
        kind: "unproven",
        reason: `${BROKER_CALLER_ENV} names ${proof.id}, which this process's parent (pid ${process.ppid}) does not conduct`,
      };
    if (proof.kind === "task") return proof;
    throw await refuse(
      root,
      named ?? taskOfPath(cwd)?.id,
      options.action,
      new CaesarError("nested_unproven", `Nested request refused: ${proof.reason}.`, {
        detail:
          "A sandboxed agent's requests reach caesar through its broker only, while its task runs. Nothing was done.",
      }),
      record,
    );
  }
  const claimed = env.CAESAR_TASK_ID;
  const token = env[TASK_TOKEN_ENV];
  const ancestor = await walkAncestry(root, cwd, options.action, record);
  if (claimed || token) {
    const proof = await proveClaim(root, claimed, token, ancestor);
    if (proof.kind === "task") {
      await auditMirrors(proof.dir);
      return proof;
    }
    const offender = ancestor?.taskId ?? taskOfPath(cwd)?.id;
    throw await refuse(
      root,
      offender,
      options.action,
      new CaesarError("nested_unproven", `Nested request refused: ${proof.reason}.`, {
        detail: [
          "caesar accepts a request from inside a task only with the credentials it gave that task's agent (CAESAR_TASK_ID with CAESAR_TASK_TOKEN, as caesar set them), and only while that task runs. Nothing was done.",
          "A person never needs these variables: unset CAESAR_TASK_ID and CAESAR_TASK_TOKEN, and run caesar from the project's own checkout.",
        ].join("\n"),
      }),
      record,
    );
  }
  const inside = taskOfPath(cwd);
  const leftover = CAESAR_ENV_NAMES.find((name) => name !== "CAESAR_PROTOCOL_VERSION" && env[name]);
  const reason = inside
    ? `this process works inside task ${inside.id}'s ${inside.where} (${cwd}) without the task's credentials`
    : leftover
      ? `${leftover} is set without CAESAR_TASK_ID: a task's variables were partly removed`
      : ancestor
        ? `this process descends from task ${ancestor.taskId}'s agent (pid ${ancestor.pid}) but carries no task credentials`
        : undefined;
  if (reason === undefined) return PERSON;
  throw await refuse(
    root,
    ancestor?.taskId ?? inside?.id,
    options.action,
    new CaesarError("nested_without_credentials", `Nested request refused: ${reason}.`, {
      detail: [
        "An agent under caesar asks with its own credentials (CAESAR_TASK_ID and CAESAR_TASK_TOKEN, as caesar set them); without them caesar cannot tell which task asks, so it refuses. Nothing was done.",
        `A person: run caesar from the project's own checkout (${root}), outside any task's worktree or task directory.`,
      ].join("\n"),
    }),
    record,
  );
}

/** The task ancestor of this process; a walk that cannot finish refuses (fail closed), never "no task". */
async function walkAncestry(
  root: string,
  cwd: string,
  action: string,
  record: boolean,
): Promise<TaskAncestor | undefined> {
  try {
    return findTaskAncestor();
  } catch (error) {
    if (!(error instanceof AncestryUnprovenError)) throw error;
    throw await refuse(
      root,
      taskOfPath(cwd)?.id,
      action,
      new CaesarError("ancestry_unproven", `Refused: ${error.reason}.`, {
        detail:
          "caesar tells a person from a task's agent by walking this process's ancestors in /proc; a walk that cannot finish proves nothing, so it refuses rather than take the request for a person's. Run caesar from a shell nearer the top of the process tree, with /proc readable. Nothing was done.",
      }),
      record,
    );
  }
}

type Proof = TaskCaller | { kind: "unproven"; reason: string };

async function proveClaim(
  root: string,
  claimed: string | undefined,
  token: string | undefined,
  ancestor: TaskAncestor | undefined,
): Promise<Proof> {
  const unproven = (reason: string): Proof => ({ kind: "unproven", reason });
  if (!claimed) return unproven(`${TASK_TOKEN_ENV} is set but CAESAR_TASK_ID is not`);
  if (!token) return unproven(`${claimed}'s credentials are missing (${TASK_TOKEN_ENV} is not set)`);
  return proveTask(root, claimed, { token, ancestor });
}

/**
 * The claimed task, when it is one caesar started in this project and runs — proven by its credentials
 * (`credentials`), or already by the channel the request came through (its broker: none to check).
 */
async function proveTask(
  root: string,
  claimed: string,
  credentials: { token: string; ancestor: TaskAncestor | undefined } | undefined,
): Promise<Proof> {
  const unproven = (reason: string): Proof => ({ kind: "unproven", reason });
  if (!isValidTaskId(claimed)) return unproven(`CAESAR_TASK_ID=${JSON.stringify(claimed)} is not a task id`);
  const dir = taskDirOf(root, claimed);
  if (!isVerifiedTask(dir)) {
    return unproven(
      `CAESAR_TASK_ID names ${claimed}, which is not a task caesar started in this project (${root})`,
    );
  }
  const state = await readState(dir);
  // Rules come from the tree's root: a request from a task is planned in the project the task was planned
  // in, never in another directory that shares its records (a `.git` file naming the project's git dir,
  // with a `.caesar/config.toml` of the agent's making).
  if (resolve(state.root) !== resolve(root))
    return unproven(
      `${claimed} belongs to the project at ${state.root}; its requests are planned there, not in ${root}`,
    );
  if (credentials) {
    const { token } = credentials;
    if (state.token_sha256 === null) return unproven(`${claimed} was never given credentials`);
    if (!(await isSameDigest(await hashTaskToken(token), state.token_sha256)))
      return unproven(
        `${claimed}'s credentials do not match (${TASK_TOKEN_ENV} is not the one caesar gave it)`,
      );
  }
  const ancestor = credentials?.ancestor;
  if (state.phase !== "running")
    return unproven(`${claimed} is ${state.phase}, not running: its credentials ended with its agent`);
  if (state.cancel_requested)
    return unproven(
      `${claimed} is being cancelled (by ${state.cancel_requested.by}): it may start nothing more`,
    );
  if (ancestor && ancestor.taskId !== claimed)
    return unproven(
      `this process runs under task ${ancestor.taskId}'s agent (pid ${ancestor.pid}), yet presents ${claimed}'s credentials`,
    );
  return { kind: "task", id: claimed, dir, root, state, plan: await loadPlan(dir) };
}

/** The task whose worktree (`.caesar/wt/<id>`) or task directory (`.caesar/tasks/<id>`) holds `path`. */
export function taskOfPath(path: string): { id: string; where: "worktree" | "task directory" } | undefined {
  const parts = path.split(sep);
  for (let index = parts.length - 3; index >= 0; index--) {
    if (parts[index] !== ".caesar") continue;
    const kind = parts[index + 1];
    const id = parts[index + 2];
    if ((kind === "wt" || kind === "tasks") && isValidTaskId(id))
      return { id, where: kind === "wt" ? "worktree" : "task directory" };
  }
  return undefined;
}

async function refuse(
  root: string,
  offender: string | undefined,
  action: string,
  error: CaesarError,
  record = true,
): Promise<CaesarError> {
  if (record && offender && isValidTaskId(offender)) await recordRefusal(root, offender, action, error);
  return error;
}

/**
 * Run a governed action for a caller: a governance refusal it throws is recorded against the calling
 * task before it reaches the front end.
 */
export async function governed<T>(caller: Caller, action: string, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    if (caller.kind === "task" && isGovernanceRefusal(error) && !recorded.has(error as object)) {
      recorded.add(error as object);
      await recordRefusal(caller.root, caller.id, action, error as CaesarError);
    }
    throw error;
  }
}

/** Refusals already on record (nested `governed` calls record each one once). */
const recorded = new WeakSet<object>();
