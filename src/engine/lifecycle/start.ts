import { existsSync } from "node:fs";
import { mkdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { type BudgetLimits, cancelReservations, reserveBudget, settleBudget } from "../../policy/budget.js";
import { assertTaskId, makeTaskId } from "../../protocol/ids.js";
import { taskPaths } from "../../protocol/task-dir.js";
import { writeJsonAtomic } from "../../support/atomic-file.js";
import { CaesarError, errnoOf, messageOf } from "../../support/errors.js";
import { withLock } from "../../support/lock.js";
import { makePrivateDir, PRIVATE_DIR_MODE } from "../../support/private-dir.js";
import { TASK_TOKEN_ENV } from "../conductor/credentials.js";
import { askService } from "../conductor/service-client.js";
import { writeTaskEnvironment } from "../conductor/task-env.js";
import { ChangeWatch } from "../store/change-watch.js";
import { controlPaths, controlTaskPaths } from "../store/control.js";
import { projectPaths } from "../store/project.js";
import type { TaskState } from "../store/state.js";
import { type TaskPlan, writePlan } from "../store/task-plan.js";
import { readState, type TaskRecord, updateState, writeState } from "../store/task-store.js";

export const CONDUCTOR_LOG = "conductor.log";

/** A task whose records and directory exist, not started yet (no conductor). */
export interface CreatedTask {
  record: TaskRecord;
  plan: TaskPlan;
}

/** Where a delegation tree's budget is kept: the project's file ledger by default, a cluster's KV bucket. */
export interface BudgetLedger {
  /** Reserve one place per task, all or none (policy/budget.ts `reserveIn`), or throw the refusal. */
  reserve(tree: string, taskIds: string[], limits: BudgetLimits, existing: boolean): Promise<void>;
  /** Take back reservations of tasks that will never exist. */
  cancel(tree: string, taskIds: string[]): Promise<void>;
}

export interface CreateTaskOptions {
  /**
   * Where the tasks reserve their places in their delegation trees' budgets, before their directories
   * exist (a refusal leaves nothing behind). Default: the project's file ledger in the control directory.
   * A task of a cluster reserves in the cluster's; a worker creating a task it was sent reserves nothing
   * (its submitter did).
   */
  ledger?: BudgetLedger;
  /** The tasks' ids, when they were given (a worker creating the task it was sent), in plan order. */
  ids?: string[];
  /** Make a fresh id (default `t_` and 8 hex digits). */
  makeId?: () => string;
  /** Fields of the initial state beside the plan's (the cluster's record, a conductor already known). */
  state?: Partial<Pick<TaskState, "remote" | "conductor">>;
  /**
   * The environment the tasks' agents inherit (task-env.ts): by default this process's — the person's shell
   * for `caesar run` — without the credentials of a task it runs under.
   */
  env?: NodeJS.ProcessEnv;
}

/**
 * Create the task directory for a resolved plan — `plan.json`, and `state.json` in phase `queued` — without
 * starting anything: whoever conducts it (a conductor, a worker, a relay) takes it from there.
 */
export async function createTask(plan: TaskPlan, options: CreateTaskOptions = {}): Promise<TaskRecord> {
  const [created] = await createTasks([plan], options);
  return created!.record;
}

/**
 * Create the task directory for a resolved plan and hand it to the project's conductor service (started if
 * none runs). Returns once the service has claimed it: the task runs on its own, whatever happens to the
 * caller.
 */
export async function startTask(plan: TaskPlan): Promise<TaskRecord> {
  const [created] = await createTasks([plan]);
  try {
    return await launchTask(created!);
  } catch (error) {
    await finishUnlaunched(created!, error);
    throw error;
  }
}

/**
 * Start several tasks all or none (fan-out, race): every budget place is reserved and every task created
 * before any conductor starts, so a refusal starts nothing. A conductor that cannot be started (a spawn
 * failure) leaves the tasks not yet launched finished as failed; the error names exactly which run.
 * `beforeLaunch` runs once every task exists, before the first conductor starts.
 */
export async function startTasks(
  plans: TaskPlan[],
  options: { beforeLaunch?: (created: TaskRecord[]) => Promise<void> } = {},
): Promise<TaskRecord[]> {
  const created = await createTasks(plans);
  // What must know every task before any runs (a race's record of its contenders).
  await options.beforeLaunch?.(created.map((task) => task.record));
  const started: TaskRecord[] = [];
  for (const [index, task] of created.entries()) {
    try {
      started.push(await launchTask(task));
    } catch (error) {
      const rest = created.slice(index);
      await Promise.all(rest.map((unlaunched) => finishUnlaunched(unlaunched, error)));
      const ids = started.map((record) => record.id);
      throw new CaesarError(
        "start_failed",
        `Started ${ids.length} of ${created.length} task(s)${ids.length ? ` (${ids.join(", ")}, still running)` : ""}; could not start ${rest.map((t) => t.record.id).join(", ")}: ${messageOf(error)}`,
        {
          detail: `The tasks not started are finished as failed and spent nothing.${ids.length ? ` Wait for or cancel the started ones: caesar_await / caesar cancel ${ids.join(" ")}.` : ""}`,
          data: { started: ids, not_started: rest.map((t) => t.record.id) },
          cause: error,
        },
      );
    }
  }
  return started;
}

/**
 * Create tasks for resolved plans, all or none: ids, then every budget place (each delegation tree's
 * under one lock), then each task's records and directory. Nothing runs yet; if anything fails, what was
 * made is taken back and the error is the first refusal (a budget's names the tree and the limit).
 */
export async function createTasks(
  plans: TaskPlan[],
  options: CreateTaskOptions = {},
  attempt = 0,
): Promise<CreatedTask[]> {
  if (plans.length === 0) return [];
  const root = plans[0]!.root;
  const store = projectPaths(root);
  const budgets = controlPaths(root).budgets;
  const ledger: BudgetLedger = options.ledger ?? {
    reserve: (tree, taskIds, limits, existing) => reserveBudget(budgets, tree, taskIds, limits, existing),
    cancel: (tree, taskIds) => cancelReservations(budgets, tree, taskIds),
  };
  await makePrivateDir(store.tasks);
  const ids = options.ids
    ? options.ids.map((id) => assertTaskId(id))
    : allocateTaskIds(root, plans.length, options.makeId ?? makeTaskId);
  const groups = new Map<string, { ids: string[]; limits: BudgetLimits; existing: boolean }>();
  plans.forEach((plan, index) => {
    const tree = plan.budget.tree ?? ids[index]!;
    const group = groups.get(tree) ?? { ids: [], limits: plan.budget, existing: plan.budget.tree !== null };
    group.ids.push(ids[index]!);
    groups.set(tree, group);
  });
  const reserved: [string, string[]][] = [];
  const takeBack = () =>
    Promise.all(reserved.map(([tree, treeIds]) => ledger.cancel(tree, treeIds).catch(() => undefined)));
  try {
    for (const [tree, group] of groups) {
      await ledger.reserve(tree, group.ids, group.limits, group.existing);
      reserved.push([tree, group.ids]);
    }
  } catch (error) {
    await takeBack();
    throw error;
  }
  const created: CreatedTask[] = [];
  try {
    for (const [index, plan] of plans.entries())
      created.push(
        await createTaskFiles(plan, ids[index]!, options.state, options.env ?? frontEndEnvironment()),
      );
  } catch (error) {
    // Only what this call made is removed: a given id that was taken belongs to someone else.
    const ours = error instanceof TaskIdTakenError ? ids.filter((id) => id !== error.message) : ids;
    await Promise.all(
      ours.map((id) =>
        Promise.all([
          rm(join(store.tasks, id), { recursive: true, force: true }),
          rm(controlTaskPaths(root, id).dir, { recursive: true, force: true }),
        ]).catch(() => undefined),
      ),
    );
    await takeBack();
    // Another process took one of the ids between the check and the mkdir: draw new ones.
    if (error instanceof TaskIdTakenError && !options.ids && attempt < 5)
      return createTasks(plans, options, attempt + 1);
    throw error;
  }
  return created;
}

class TaskIdTakenError extends Error {}

/** Fresh ids that name neither a task directory nor a control record. */
function allocateTaskIds(root: string, count: number, makeId: () => string): string[] {
  const tasks = projectPaths(root).tasks;
  const ids = new Set<string>();
  while (ids.size < count) {
    const id = makeId();
    if (!existsSync(join(tasks, id)) && !existsSync(controlTaskPaths(root, id).dir)) ids.add(id);
  }
  return [...ids];
}

/** The task's directory (claimed with mkdir), its plan and its first state — records first, then mirrors. */
async function createTaskFiles(
  plan: TaskPlan,
  id: string,
  extra: CreateTaskOptions["state"] = {},
  env: NodeJS.ProcessEnv = {},
): Promise<CreatedTask> {
  const store = projectPaths(plan.root);
  const dir = join(store.tasks, id);
  try {
    await mkdir(dir, { mode: PRIVATE_DIR_MODE });
  } catch (error) {
    if (errnoOf(error) === "EEXIST") throw new TaskIdTakenError(id);
    throw error;
  }
  const paths = taskPaths(dir);
  // The project's change number (its own lock and file) is drawn while the plan and the environment are
  // written: each write is flushed to disk as before, two of them at once instead of one after the other.
  // Both finish before anything fails, so that what a failure removes is not written again after.
  const [numbered, written] = await Promise.allSettled([
    nextChangeNumber(store.state),
    (async () => {
      await writePlan(dir, plan);
      // Before the state: a service that finds the task (its scan) conducts it with this environment.
      await writeTaskEnvironment(dir, env);
    })(),
  ]);
  if (written.status === "rejected") throw written.reason;
  if (numbered.status === "rejected") throw numbered.reason;
  const now = new Date().toISOString();
  const state: TaskState = {
    version: 1,
    id,
    phase: "queued",
    created_at: now,
    updated_at: now,
    agent: plan.agent,
    role: plan.role,
    objective: plan.objective,
    mode: plan.mode,
    isolation: plan.isolation,
    depth: plan.depth,
    parent_id: plan.parent_id,
    root: plan.root,
    workspace: plan.root,
    worktree: null,
    branch: null,
    base_ref: null,
    start_tree: null,
    end_tree: null,
    result_commit: null,
    materialised: [],
    linked: [],
    conductor: null,
    agent_process: null,
    agent_turn: null,
    agent_started_at: null,
    check_process: null,
    setup_process: null,
    waiting_for_slot: null,
    command: null,
    started_at: null,
    finished_at: null,
    deadline_at: null,
    outcome: null,
    exit: null,
    report_status: null,
    report: null,
    final_events: null,
    error: null,
    cancel_requested: null,
    applied: null,
    cleaned_at: null,
    token_sha256: null,
    change_number: numbered.value,
    remote: null,
    ...extra,
  };
  await writeState(dir, state, { create: true });
  return { record: { id, dir, paths, state }, plan };
}

/** Hand a created task to the project's conductor service; resolves once the service has claimed it. */
export async function launchTask(created: CreatedTask): Promise<TaskRecord> {
  const { record, plan } = created;
  const { id, dir, paths } = record;
  const response = await askService(plan.root, { op: "conduct", task: id });
  if (!response.ok)
    throw new CaesarError(
      "service_refused",
      `The conductor service did not take task ${id}: ${response.message}.`,
      {
        detail: "The task stays queued: any caesar command starts a service that takes it.",
      },
    );
  return { id, dir, paths, state: await readState(dir) };
}

/** The environment a front end's tasks inherit: its own, without the credentials of a task it runs under. */
function frontEndEnvironment(): NodeJS.ProcessEnv {
  const { [TASK_TOKEN_ENV]: _credentials, ...env } = process.env;
  return env;
}

/** A created task that will never get a conductor: finished as failed, its budget place given back. */
async function finishUnlaunched(task: CreatedTask, cause: unknown): Promise<void> {
  const { record, plan } = task;
  await updateState(record.dir, (state) =>
    state.phase === "queued" && state.conductor === null
      ? {
          ...state,
          phase: "finished",
          outcome: "failed",
          finished_at: new Date().toISOString(),
          error: { code: "not_started", message: `The task was never started: ${messageOf(cause)}` },
        }
      : undefined,
  ).catch(() => undefined);
  await settleBudget(
    controlPaths(plan.root).budgets,
    plan.budget.tree ?? record.id,
    record.id,
    false,
    0,
  ).catch(() => undefined);
}

/**
 * Wait (at most `timeoutMs`) until a conductor has claimed the task — the prepared one, or its
 * replacement if it could not start. A front end about to exit (`run --detach`) waits for this, so that
 * it is there to replace a conductor that dies at once, and the id it prints names a task with a pid.
 */
export async function awaitClaim(dir: string, timeoutMs: number): Promise<TaskState> {
  const deadline = Date.now() + timeoutMs;
  const watch = new ChangeWatch(dir, { pollMs: 50 });
  try {
    for (;;) {
      const state = await readState(dir);
      if (state.conductor !== null || state.phase === "finished" || Date.now() >= deadline) return state;
      await watch.next(Math.max(1, deadline - Date.now()));
    }
  } finally {
    watch.close();
  }
}

/** Each task's result gets a sequential number in its project, like a pull request. */
async function nextChangeNumber(stateDir: string): Promise<number> {
  await makePrivateDir(stateDir);
  const counter = join(stateDir, "changes.json");
  return withLock(join(stateDir, ".changes.lock"), async () => {
    let last = 0;
    try {
      last = (JSON.parse(await readFile(counter, "utf8")) as { last: number }).last;
    } catch {
      last = 0;
    }
    await writeJsonAtomic(counter, { last: last + 1 });
    return last + 1;
  });
}
