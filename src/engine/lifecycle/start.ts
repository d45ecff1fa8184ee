import { appendFileSync, existsSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { reserveBudget } from "../../policy/budget.js";
import { makeTaskId } from "../../protocol/ids.js";
import { taskPaths } from "../../protocol/task-dir.js";
import { writeJsonAtomic } from "../../support/atomic-file.js";
import { errnoOf } from "../../support/errors.js";
import { withFileLock } from "../../support/file-lock.js";
import { recordProcess } from "../../support/process.js";
import { type ConductorExit, launchConductor, type PreparedConductor } from "../conductor/launch.js";
import { ChangeWatch } from "../store/change-watch.js";
import { projectPaths } from "../store/project.js";
import type { TaskState } from "../store/state.js";
import { type TaskPlan, writePlan } from "../store/task-plan.js";
import { readState, type TaskRecord, updateState, writeState } from "../store/task-store.js";

export const CONDUCTOR_LOG = "conductor.log";

/**
 * Create the task directory for a resolved plan and start its conductor, detached. Returns at once:
 * the task runs on its own, whatever happens to the caller.
 */
export async function startTask(
  plan: TaskPlan,
  options: { conductor?: PreparedConductor } = {},
): Promise<TaskRecord> {
  const store = projectPaths(plan.root);
  await mkdir(store.tasks, { recursive: true });
  const { id, dir } = await createTaskDir(store.tasks, (taskId) =>
    reserveBudget(store.state, plan.budget.tree ?? taskId, taskId, plan.budget),
  );
  const paths = taskPaths(dir);
  await writePlan(dir, plan);
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
    check_process: null,
    waiting_for_slot: null,
    command: null,
    started_at: null,
    finished_at: null,
    deadline_at: null,
    outcome: null,
    exit: null,
    report_status: null,
    report: null,
    error: null,
    cancel_requested: null,
    applied: null,
    cleaned_at: null,
    change_number: await nextChangeNumber(store.state),
  };
  await writeState(dir, state);
  if (options.conductor) {
    // A prepared conductor records itself when it takes the task. Until then the task is unclaimed, so a
    // follower waits rather than concluding it: if this one ends without claiming it, it is replaced.
    const prepared = options.conductor;
    prepared.assign(plan.root, id);
    void prepared.exited.then((exit) => {
      if (prepared.pid !== undefined && (exit.code !== 0 || exit.signal !== null))
        return replaceUnstartedConductor(plan.root, id, dir, prepared.pid, exit);
    });
    return { id, dir, paths, state };
  }
  const pid = launchConductor(plan.root, id, join(dir, CONDUCTOR_LOG));
  if (pid !== undefined) {
    const record = recordProcess(pid);
    const next = await updateState(dir, (current) =>
      current.conductor ? undefined : { ...current, conductor: record },
    );
    return { id, dir, paths, state: next };
  }
  return { id, dir, paths, state };
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

/**
 * A prepared conductor that died before its task left "queued" — it could not even start — is replaced by
 * a new one, and conductor.log says so: how a conductor was started is never a reason for a task to fail.
 * Under the state's lock, so a task already concluded, or claimed by another conductor, is left alone.
 */
async function replaceUnstartedConductor(
  root: string,
  id: string,
  dir: string,
  deadPid: number,
  exit: ConductorExit,
): Promise<void> {
  await updateState(dir, (state) => {
    if (state.phase !== "queued" || (state.conductor !== null && state.conductor.pid !== deadPid))
      return undefined; // concluded already, or claimed by a conductor that is not this dead one
    const log = join(dir, CONDUCTOR_LOG);
    const how = exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.code}`;
    appendFileSync(
      log,
      `[caesar] conductor ${deadPid} ended before starting the task (${how}); starting another\n`,
    );
    const pid = launchConductor(root, id, log);
    return pid === undefined ? undefined : { ...state, conductor: recordProcess(pid) };
  }).catch(() => undefined);
}

/** Reserve the budget first (a refusal leaves nothing behind), then create the directory. */
async function createTaskDir(
  tasksRoot: string,
  reserve: (id: string) => Promise<void>,
): Promise<{ id: string; dir: string }> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const id = makeTaskId();
    if (existsSync(join(tasksRoot, id))) continue;
    await reserve(id);
    const dir = join(tasksRoot, id);
    try {
      await mkdir(dir);
      return { id, dir };
    } catch (error) {
      if (errnoOf(error) !== "EEXIST") throw error;
    }
  }
  throw new Error(`could not allocate a task id in ${tasksRoot}`);
}

/** Each task's result gets a sequential number in its project, like a pull request. */
async function nextChangeNumber(stateDir: string): Promise<number> {
  await mkdir(stateDir, { recursive: true });
  const counter = join(stateDir, "changes.json");
  return withFileLock(join(stateDir, ".changes.lock"), async () => {
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
