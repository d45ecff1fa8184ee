import { hostname } from "node:os";
import { join } from "node:path";
import { isRelayRunning } from "../engine/conductor/relay.js";
import { createTasks } from "../engine/lifecycle/start.js";
import type { RemoteState } from "../engine/store/state.js";
import type { TaskPlan } from "../engine/store/task-plan.js";
import { readState, type TaskRecord, updateState } from "../engine/store/task-store.js";
import { makeTaskId } from "../protocol/ids.js";
import { CaesarError, isCaesarError, UsageError } from "../support/errors.js";
import { withLock } from "../support/lock.js";
import { type Cluster, connectCluster } from "./connection.js";
import { pushStart } from "./git-refs.js";
import { clusterLedger, settleClusterBudget } from "./ledger.js";
import { LOG_STREAM, queueNameOf, taskSubject } from "./names.js";
import { finishHere } from "./relay/finish-here.js";
import { launchRelay } from "./relay/launch.js";
import { ensureInfrastructure } from "./setup.js";
import { encode, type TaskMessage } from "./wire.js";

/**
 * Send a planned task to the cluster: reserve its place in the tree's budget (in the cluster's ledger),
 * create its task directory here, push its starting point, put it in the work queue, and make sure the
 * project's relay runs to follow it. Every refusal — the server unreachable, the budget spent — comes
 * before the directory exists. A push that fails finishes the task failed, saying why; a queue that
 * cannot be reached right now leaves it queued for the relay to send.
 */
export async function submitRemoteTask(plan: TaskPlan): Promise<TaskRecord> {
  const [record] = await submitRemoteTasks([plan]);
  return record!;
}

/**
 * Send several planned tasks to one cluster all or none (a fan-out, a race): every budget place is
 * reserved in the cluster's ledger and every task created here before any is sent; `beforeLaunch` runs
 * once every task exists, before the first is sent.
 */
export async function submitRemoteTasks(
  plans: TaskPlan[],
  options: { beforeLaunch?: (created: TaskRecord[]) => Promise<void> } = {},
): Promise<TaskRecord[]> {
  const remote = plans[0]!.remote!;
  const queues = await Promise.all(
    plans.map((plan) => queueNameOf(plan.repo_top!, plan.base_commit!, plan.remote!.queue)),
  );
  const servers = remote.servers.join(",");
  if (plans.some((plan, index) => plan.remote?.servers.join(",") !== servers || queues[index] !== queues[0]))
    throw new UsageError("cluster_mixed", "These tasks would go to different clusters or queues.", {
      detail: "Send the tasks of one fan-out or race to one cluster: pass the same --on (or none) for all.",
    });
  const queue = queues[0]!;
  const cluster = await connectCluster(remote, "caesar submit");
  try {
    await ensureInfrastructure(cluster, remote.replicas);
    const initial: RemoteState = {
      servers,
      queue,
      git_remote: remote.git_remote,
      start_ref: null,
      submitted_at: null,
      queue_seq: null,
      log_seq_before: null,
      worker: null,
      attempt: 0,
      agent_pid: null,
      worktree: null,
      branch: null,
      lost: [],
      attempts: [],
    };
    const created = await createTasks(plans, {
      makeId: () => makeTaskId(8),
      ledger: clusterLedger(cluster, queue, plans[0]!.root),
      state: { remote: initial },
    });
    await options.beforeLaunch?.(created.map((task) => task.record));
    const records: TaskRecord[] = [];
    for (const { record, plan } of created) {
      try {
        await sendToQueue(cluster, record, plan);
      } catch (error) {
        if (isCaesarError(error) && error.code === "start_push_failed") {
          await finishHere(record.dir, plan, {
            code: error.code,
            message: `${error.message} ${error.detail}`,
          });
          await settleClusterBudget(cluster, queue, plan.budget.tree ?? record.id, record.id, false, 0).catch(
            () => undefined,
          );
        }
        // Otherwise the queue was out of reach for a moment: the relay sends it when it can.
      }
      records.push({ ...record, state: await readState(record.dir) });
    }
    if (!isRelayRunning(plans[0]!.root)) launchRelay(plans[0]!.root);
    return records;
  } finally {
    await cluster.close();
  }
}

/**
 * Push the starting point and put the task in the queue (both idempotent: the relay does this again for a
 * task whose front end stopped half way), then record it in state.json.
 */
export async function sendToQueue(cluster: Cluster, record: Pick<TaskRecord, "id" | "dir">, plan: TaskPlan) {
  // The front end and the relay may both try: one at a time, and the second finds it sent.
  await withLock(join(record.dir, ".submit.lock"), () => sendOnce(cluster, record, plan));
}

async function sendOnce(cluster: Cluster, record: Pick<TaskRecord, "id" | "dir">, plan: TaskPlan) {
  const remote = plan.remote!;
  const state = await readState(record.dir);
  if (!state.remote) throw new CaesarError("not_remote", `Task ${record.id} is not a remote task.`);
  if (state.remote.submitted_at !== null || state.phase === "finished") return;
  const startRef = await pushStart(plan.repo_top!, remote.git_remote, record.id, plan.base_commit!);
  await recordLogStart(cluster, record.dir, state.remote.log_seq_before);
  const message: TaskMessage = {
    protocol: "caesar.cluster.task/v1",
    task_id: record.id,
    submitted_at: state.created_at,
    submitter: { host: hostname(), root: plan.root },
    start: { ref: startRef, commit: plan.base_commit!, remote: remote.git_remote },
    // The submitter's paths mean nothing on a worker, and its credentials' paths are its own business.
    plan: { ...plan, root: "", repo_top: null, remote: null },
    on_worker_loss: remote.on_worker_loss,
    max_attempts: remote.max_attempts,
    retry: remote.retry,
  };
  // The task id is the message id: sending again (after a lost reply) stores it once.
  const ack = await cluster.js.publish(taskSubject(state.remote.queue, plan.agent), encode(message), {
    msgID: record.id,
    timeout: 10_000,
  });
  await updateState(record.dir, (current) =>
    current.remote
      ? {
          ...current,
          remote: {
            ...current.remote,
            start_ref: startRef,
            submitted_at: current.remote.submitted_at ?? new Date().toISOString(),
            queue_seq: ack.seq,
          },
        }
      : undefined,
  );
}

/**
 * Record where the task's log will start, before the task is first published: a worker can only publish
 * its log after taking the message, so every message of it comes after this sequence. Kept from the first
 * attempt: a publish whose reply was lost may have reached a worker already, whose log a later reading
 * would skip.
 */
async function recordLogStart(cluster: Cluster, dir: string, recorded: number | null): Promise<void> {
  if (recorded !== null) return;
  const { state } = await cluster.jsm.streams.info(LOG_STREAM);
  await updateState(dir, (current) =>
    current.remote && current.remote.log_seq_before === null
      ? { ...current, remote: { ...current.remote, log_seq_before: state.last_seq } }
      : undefined,
  );
}
