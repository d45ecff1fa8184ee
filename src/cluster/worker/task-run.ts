import { join } from "node:path";
import type { JsMsg } from "@nats-io/jetstream";
import { brokerSocketOf } from "../../engine/conductor/broker-files.js";
import { conduct } from "../../engine/conductor/conductor.js";
import { TaskBroker } from "../../engine/conductor/task-broker.js";
import { UNSANDBOXED_TITLE } from "../../engine/lifecycle/plan.js";
import { createTask } from "../../engine/lifecycle/start.js";
import { controlTaskPaths } from "../../engine/store/control.js";
import { appendTaskText } from "../../engine/store/task-files.js";
import type { TaskPlan } from "../../engine/store/task-plan.js";
import { readState, taskDirOf } from "../../engine/store/task-store.js";
import { isCaesarError, messageOf } from "../../support/errors.js";
import { recordProcess } from "../../support/process.js";
import { resultRefName } from "../../workspace/result-ref.js";
import { removeWorktree } from "../../workspace/worktree.js";
import { holdsClaim, takeClaim } from "../claims.js";
import { recordDropped, whyInvalid } from "../dropped.js";
import { fetchStart } from "../git-refs.js";
import { isHolderAlive } from "../holder.js";
import { cancelKey, WORKERS_BUCKET } from "../names.js";
import { Outbox } from "../outbox.js";
import { type Claim, decode, type Final, type TaskMessage, TaskMessageSchema } from "../wire.js";
import { refusalOf, subjectAgent } from "./admit.js";
import { remotePlanFor, type WorkerContext } from "./context.js";
import { cascadeCancel, followControl } from "./control.js";
import { handBack, isOwnFault } from "./hand-back.js";
import { HeldTask, retrying } from "./held-task.js";
import { clearEarlierAttempt, localIdFor } from "./local-store.js";
import { ackFor, emptyFinal, finalOf, publishFinal, pushResultFenced } from "./publish-final.js";
import { TaskPublisher } from "./publisher.js";
import { retryLater, transientRetry, withAttempts } from "./retry.js";
import { workerSandbox } from "./worker-sandbox.js";

/**
 * Handle one delivery of the work queue: take the task's claim, then run it (or, by the claim's
 * verdict, only ack the message, drop a duplicate, or finish a task whose workers were lost). The
 * message is acked only once the claim records the task's end — so a task is never lost — and only by
 * the worker whose token the claim carries — so it is never finished twice.
 */
export async function handleDelivery(
  context: WorkerContext,
  msg: JsMsg,
  held: Map<string, HeldTask>,
): Promise<void> {
  const message = decode(TaskMessageSchema, msg.data);
  if (!message) {
    const why = whyInvalid(msg.data);
    context.log(`[worker] dropped an invalid task message (stream seq ${msg.seq}): ${why}`);
    msg.term();
    await dropped(context, msg, null, "dropped", why);
    return;
  }
  const id = message.task_id;
  // Published on one agent's subject for another agent: not a task this queue's workers take.
  if (subjectAgent(msg.subject) !== message.plan.agent) {
    const why = `published for agent ${subjectAgent(msg.subject)}, planned for ${message.plan.agent}`;
    context.log(`[worker] dropped task ${id}: ${why}`);
    msg.term();
    await dropped(context, msg, id, "dropped", why);
    return;
  }
  const running = held.get(id);
  if (running) {
    // Delivered again to this very worker (its heartbeats were late): carry on with the new delivery.
    running.msg = msg;
    return;
  }
  // Redelivered while its holder still runs it (a server restart outlasted the ack wait): not lost.
  const workers = await context.cluster.bucket(WORKERS_BUCKET).catch(() => undefined);
  if (
    workers &&
    (await isHolderAlive(context.claims, workers, id, msg.seq, context.serverNow).catch(() => false))
  ) {
    context.log(`[worker] ${id}: redelivered, but its worker still runs it; leaving it there`);
    msg.nak(context.heartbeatMs);
    return;
  }
  const task = new HeldTask(msg);
  held.set(id, task);
  // In-progress acks, from now on: fetching and preparing may take a while too.
  const beat = setInterval(() => task.msg.working(), Math.max(250, Math.floor(context.heartbeatMs / 3)));
  try {
    const decision = await retrying(context, `claim ${id}`, () =>
      takeClaim(context.claims, id, msg.seq, context.me, {
        onWorkerLoss: message.on_worker_loss,
        maxAttempts: message.max_attempts,
      }),
    );
    if (!decision) {
      task.msg.nak(5_000);
      return;
    }
    // Claimed: `cluster status` (which trusts a record's tasks only as far as their claims) shows it now.
    context.onHeldChange();
    if (decision.kind === "finished") await ackFor(context, task, id);
    else if (decision.kind === "duplicate") {
      task.msg.term();
      await dropped(
        context,
        msg,
        id,
        "dropped",
        `a second message for task ${id}, whose claim is another message's (stream seq ${decision.claim.msg_seq})`,
      );
    } else if (decision.kind === "give-up")
      await giveUp(context, task, message, decision.claim, decision.token);
    else await runAttempt(context, message, task, decision.claim, decision.token);
  } catch (error) {
    context.log(`[worker] ${id}: ${messageOf(error)}`);
    // Nothing recorded its end: the queue hands it out again after the heartbeat timeout.
  } finally {
    clearInterval(beat);
    held.delete(id);
    context.onHeldChange();
  }
}

async function runAttempt(
  context: WorkerContext,
  message: TaskMessage,
  task: HeldTask,
  claim: Claim,
  token: number,
): Promise<void> {
  const id = message.task_id;
  context.log(
    `[worker] ${id}: attempt ${claim.attempt} (${message.plan.agent}: ${message.plan.objective.split("\n")[0]!.slice(0, 60)})`,
  );
  if (await context.control.get(cancelKey(id)).then((entry) => entry?.operation === "PUT")) {
    await publishFinal(context, task, claim, token, {
      ...emptyFinal("cancelled"),
      error: {
        code: "cancelled_before_start",
        message: "Cancelled before its worker started it: the agent never ran.",
      },
    });
    return;
  }
  const refusal = refusalOf(message, context.agents, context.config, context.me.id);
  if (refusal) {
    await publishFinal(context, task, claim, token, { ...emptyFinal("failed"), error: refusal });
    await dropped(context, task.msg, id, "refused", `${refusal.code}: ${refusal.message}`);
    return;
  }
  const confined = workerSandbox(message.plan, context.config, context.root, context.me.id);
  if ("refusal" in confined) {
    await publishFinal(context, task, claim, token, { ...emptyFinal("failed"), error: confined.refusal });
    await dropped(context, task.msg, id, "refused", `${confined.refusal.code}: ${confined.refusal.message}`);
    return;
  }
  const plan: TaskPlan = {
    ...message.plan,
    // The worker's own [sandbox] decides, never the message's sender.
    sandbox: confined.sandbox,
    findings: [
      ...message.plan.findings.filter((finding) => finding.title !== UNSANDBOXED_TITLE),
      ...confined.findings,
    ],
    root: context.root,
    repo_top: context.top,
    base_commit: message.start.commit,
    remote: remotePlanFor(context, message),
    // The submitter's global configuration file means nothing here: this task's nested requests are
    // governed by the worker account's own (engine/lifecycle/plan.ts `globalConfigOf`).
    global_config: null,
    // A race's record is its submitter's: the submitter's relay settles it when this task's final arrives.
    race: null,
  };
  let prepared: Final | undefined;
  const localId = localIdFor(context, id);
  try {
    await clearEarlierAttempt(context, plan, localId);
    await fetchStart(context.top, context.gitRemote, id, message.start.commit);
    await createTask(plan, {
      ids: [localId],
      // Its submitter reserved its place in the cluster's ledger: nothing more to reserve here.
      ledger: { reserve: async () => {}, cancel: async () => {} },
      state: { conductor: recordProcess(process.pid) },
    });
  } catch (error) {
    if (await isOwnFault(context, id, error)) {
      await handBack(context, task, claim, token, error, message.max_attempts);
      context.health.recordOwnFault(messageOf(error));
      return;
    }
    prepared = {
      ...emptyFinal("failed"),
      error: {
        code: isCaesarError(error) ? error.code : "worker_prepare_failed",
        message: `Worker ${context.me.id} could not prepare the task: ${messageOf(error)}`,
      },
    };
  }
  if (prepared) {
    await publishFinal(context, task, claim, token, prepared);
    return;
  }
  context.health.recordPrepared();

  const dir = taskDirOf(context.root, localId);
  const outbox = new Outbox(context.cluster.js, id, claim.attempt, context.me.id);
  const publisher = new TaskPublisher(dir, outbox);
  publisher.start();
  const stopControl = await followControl(context, id, localId, dir, task);
  let fenced = false;
  let broker: TaskBroker | undefined;
  // The claim is checked as often as the queue is told the task is in progress: a worker given up on
  // stops its agent and publishes nothing more.
  const fence = setInterval(
    async () => {
      if (fenced) return;
      const ours = await holdsClaim(context.claims, id, token).catch(() => true);
      if (!ours) {
        fenced = true;
        context.log(`[worker] ${id}: another worker took the task over; stopping it here`);
        outbox.close();
        task.abort.abort();
      }
    },
    Math.max(250, Math.floor(context.heartbeatMs / 3)),
  );
  try {
    // In this process, beside the worker's other tasks: its own cancel, and its own conductor.log.
    const log = join(dir, "conductor.log");
    await appendTaskText(log, `[caesar worker ${context.me.id}] ${id}: attempt ${claim.attempt}\n`).catch(
      () => undefined,
    );
    await conduct(context.root, localId, {
      signal: task.abort.signal,
      env: process.env,
      log: (line) => void appendTaskText(log, `${line}\n`).catch(() => undefined),
      // A sandboxed agent's one door to caesar, as under the service: its nested requests (a child task,
      // which goes to the cluster as its parent did; chat; apply) run as this worker's children.
      openBroker: async (taskId, taskDir, plan) => {
        broker = new TaskBroker(
          taskId,
          taskDir,
          plan,
          brokerSocketOf(controlTaskPaths(context.root, taskId).dir),
          context.log,
        );
        await broker.listen();
        return broker.socketPath;
      },
    });
  } finally {
    broker?.close();
    clearInterval(fence);
    stopControl();
    await publisher.finish().catch(() => undefined);
  }
  // Again once its agent is gone: a sub-task it was starting when the cancel came exists by now.
  if (task.cancelled) cascadeCancel(context, id, localId);
  if (fenced || task.abandoned) {
    outbox.close();
    if (task.abandoned) task.msg.nak();
    return;
  }
  const logSeq = await outbox.flush();
  const state = await readState(dir);
  const final = finalOf(state, logSeq);
  const retry = transientRetry(message.retry, claim, final);
  if (retry && (await retryLater(context, task, claim, token, final, retry.delayMs))) {
    // The next attempt starts afresh from the starting point: this one's worktree has nothing to keep.
    if (state.worktree)
      await removeWorktree(context.top, state.worktree, state.branch).catch(() => undefined);
    return;
  }
  if (state.result_commit) {
    const pushed = await pushResultFenced(context, id, state.result_commit, token);
    if (pushed === "fenced") return;
    if (pushed !== "pushed") {
      final.result_commit = null;
      final.report = final.report && {
        ...final.report,
        findings: [
          ...final.report.findings,
          {
            severity: "high",
            title: "The result could not be pushed",
            detail: `${pushed} It is kept in worker ${context.me.id}'s clone as ${resultRefName(id)}.`,
          },
        ],
      };
    }
  }
  if (await publishFinal(context, task, claim, token, withAttempts(claim, final))) {
    // Its result is on the remote: the worktree has nothing left that anyone needs.
    if (state.worktree && (final.result_commit || state.end_tree === state.start_tree))
      await removeWorktree(context.top, state.worktree, state.branch).catch(() => undefined);
  }
}

/** Record a message this worker dropped or refused, for `cluster status` (best effort). */
async function dropped(
  context: WorkerContext,
  msg: JsMsg,
  taskId: string | null,
  action: "dropped" | "refused",
  reason: string,
): Promise<void> {
  await recordDropped(context.dropped, msg, { worker: context.me.id, taskId, action, reason }).catch(
    (error) => context.log(`[worker] could not record the ${action} message ${msg.seq}: ${messageOf(error)}`),
  );
}

/** The task's workers were lost and the policy says stop: finish it failed, saying so. */
async function giveUp(
  context: WorkerContext,
  task: HeldTask,
  message: TaskMessage,
  claim: Claim,
  token: number,
): Promise<void> {
  const last = claim.lost[claim.lost.length - 1];
  const why =
    message.on_worker_loss === "fail"
      ? '[cluster] on_worker_loss = "fail"'
      : `it has lost ${claim.lost.length} worker(s) (${claim.lost.map((entry) => entry.worker).join(", ")}; [cluster] max_attempts = ${message.max_attempts})`;
  await publishFinal(context, task, claim, token, {
    ...emptyFinal("failed"),
    error: {
      code: "worker_lost",
      message: `Its worker ${last?.worker ?? "?"} was lost: it stopped answering for longer than the heartbeat timeout (${Math.round(context.heartbeatMs / 1000)} s). The task was not run again: ${why}.`,
    },
  });
}
