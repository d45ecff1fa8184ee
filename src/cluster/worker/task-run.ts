import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { JsMsg } from "@nats-io/jetstream";
import { conduct } from "../../engine/conductor/conductor.js";
import { plannedWorktree } from "../../engine/conductor/isolate.js";
import { terminateGroup } from "../../engine/conductor/terminate.js";
import { createTask } from "../../engine/lifecycle/start.js";
import { answerQuestion } from "../../engine/questions/questions.js";
import type { TaskState } from "../../engine/store/state.js";
import type { TaskPlan } from "../../engine/store/task-plan.js";
import { readState, taskDirOf } from "../../engine/store/task-store.js";
import { AnswerSchema } from "../../protocol/channel-documents.js";
import { isValidQuestionId } from "../../protocol/ids.js";
import { messageOf } from "../../support/errors.js";
import { isProcessAlive, recordProcess } from "../../support/process.js";
import { resultRefName } from "../../workspace/result-ref.js";
import { removeWorktree } from "../../workspace/worktree.js";
import { finishClaim, holdsClaim, takeClaim } from "../claims.js";
import { fetchStart, pushResult, remoteRef } from "../git-refs.js";
import { cancelKey } from "../names.js";
import { Outbox } from "../outbox.js";
import { type Claim, decode, type Final, type TaskMessage, TaskMessageSchema } from "../wire.js";
import { remotePlanFor, type WorkerContext } from "./context.js";
import { TaskPublisher } from "./publisher.js";

/** A task this worker holds: the queue delivery it acts on (a redelivery here replaces it), its cancel. */
export class HeldTask {
  readonly abort = new AbortController();
  /** The worker is stopping without finishing it: publish nothing, let the queue give it to another. */
  abandoned = false;
  constructor(public msg: JsMsg) {}
}

/**
 * Handle one delivery of the work queue: take the task's claim, then run it (or, by the claim's
 * verdict, only ack the message, drop a duplicate, or conclude a task whose workers were lost). The
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
    context.log(`[worker] dropped an invalid task message (stream seq ${msg.seq})`);
    msg.term();
    return;
  }
  const id = message.task_id;
  const running = held.get(id);
  if (running) {
    // Delivered again to this very worker (its heartbeats were late): carry on with the new delivery.
    running.msg = msg;
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
    if (decision.kind === "finished") await ackFor(context, task, id);
    else if (decision.kind === "duplicate") task.msg.term();
    else if (decision.kind === "give-up")
      await giveUp(context, task, message, decision.claim, decision.token);
    else await runAttempt(context, message, task, decision.claim, decision.token);
  } catch (error) {
    context.log(`[worker] ${id}: ${messageOf(error)}`);
    // Nothing recorded its end: the queue hands it out again after the heartbeat timeout.
  } finally {
    clearInterval(beat);
    held.delete(id);
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
  const plan: TaskPlan = {
    ...message.plan,
    root: context.root,
    repo_top: context.top,
    base_commit: message.start.commit,
    remote: remotePlanFor(context, message),
  };
  let prepared: Final | undefined;
  const localId = localIdFor(context, id);
  try {
    await clearEarlierAttempt(context, plan, localId);
    await fetchStart(context.top, context.gitRemote, id, message.start.commit);
    await createTask(plan, {
      id: localId,
      reserve: async () => {},
      state: { conductor: recordProcess(process.pid) },
    });
  } catch (error) {
    prepared = {
      ...emptyFinal("failed"),
      error: {
        code: (error as { code?: string }).code ?? "worker_prepare_failed",
        message: `Worker ${context.me.id} could not prepare the task: ${messageOf(error)}`,
      },
    };
  }
  if (prepared) {
    await publishFinal(context, task, claim, token, prepared);
    return;
  }

  const dir = taskDirOf(context.root, localId);
  const outbox = new Outbox(context.cluster.js, id, claim.attempt, context.me.id);
  const publisher = new TaskPublisher(dir, outbox);
  publisher.start();
  const stopControl = await followControl(context, id, localId, dir, task);
  let fenced = false;
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
    appendFileSync(log, `[caesar worker ${context.me.id}] ${id}: attempt ${claim.attempt}\n`);
    await conduct(context.root, localId, {
      signal: task.abort.signal,
      env: process.env,
      log: (line) => appendFileSync(log, `${line}\n`),
      takeSlot: false,
    });
  } finally {
    clearInterval(fence);
    stopControl();
    await publisher.finish().catch(() => undefined);
  }
  if (fenced || task.abandoned) {
    outbox.close();
    if (task.abandoned) task.msg.nak();
    return;
  }
  const logSeq = await outbox.flush();
  const state = await readState(dir);
  const final = finalOf(state, logSeq);
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
  if (await publishFinal(context, task, claim, token, final)) {
    // Its result is on the remote: the worktree has nothing left that anyone needs.
    if (state.worktree && (final.result_commit || state.end_tree === state.start_tree))
      await removeWorktree(context.top, state.worktree, state.branch).catch(() => undefined);
  }
}

/** The task's workers were lost and the policy says stop: conclude it failed, saying so. */
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

/**
 * Record the end in the claim (only with our token: false when another worker took over), then ack the
 * queue message. A crash between the two is safe: the redelivery finds the claim finished and only acks.
 */
async function publishFinal(
  context: WorkerContext,
  task: HeldTask,
  claim: Claim,
  token: number,
  final: Final,
): Promise<boolean> {
  const recorded = await retrying(context, `finish ${claim.task_id}`, () =>
    finishClaim(context.claims, claim, token, final),
  );
  if (recorded === undefined) return false; // the server stayed away: the queue gives the task out again
  if (!recorded) {
    context.log(`[worker] ${claim.task_id}: not published — its claim belongs to another worker now`);
    return false;
  }
  await ackFor(context, task, claim.task_id);
  context.log(
    `[worker] ${claim.task_id}: ${final.outcome}${final.report ? ` (${final.report.status})` : ""}`,
  );
  return true;
}

async function ackFor(context: WorkerContext, task: HeldTask, id: string): Promise<void> {
  await retrying(context, `ack ${id}`, () => task.msg.ackAck({ timeout: 5_000 }));
}

function emptyFinal(outcome: Final["outcome"]): Final {
  return {
    outcome,
    exit: null,
    report_status: null,
    report: null,
    error: null,
    started_at: null,
    finished_at: new Date().toISOString(),
    deadline_at: null,
    command: null,
    base_ref: null,
    start_tree: null,
    end_tree: null,
    result_commit: null,
    log_seq: 0,
  };
}

function finalOf(state: TaskState, logSeq: number): Final {
  return {
    outcome: state.outcome ?? "failed",
    exit: state.exit,
    report_status: state.report_status,
    report: state.report,
    error: state.error,
    started_at: state.started_at,
    finished_at: state.finished_at ?? new Date().toISOString(),
    deadline_at: state.deadline_at,
    command: state.command,
    base_ref: state.base_ref,
    start_tree: state.start_tree,
    end_tree: state.end_tree,
    result_commit: state.result_commit,
    log_seq: logSeq,
  };
}

/**
 * Push the result as `refs/caesar/tasks/<id>`, only where there is none yet; when there is one (pushed by
 * a worker that was given up on, or by one that took over), check the claim is still ours before pushing
 * over it: a worker that lost its claim never overwrites the result of the one that holds it.
 */
async function pushResultFenced(
  context: WorkerContext,
  id: string,
  commit: string,
  token: number,
): Promise<"pushed" | "fenced" | string> {
  let expected = "";
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      if ((await pushResult(context.top, context.gitRemote, id, commit, expected)) === "pushed")
        return "pushed";
    } catch (error) {
      if (attempt === 4) return messageOf(error);
      await new Promise((resolve) => setTimeout(resolve, 1_000 * (attempt + 1)));
      continue;
    }
    if (!(await holdsClaim(context.claims, id, token).catch(() => false))) return "fenced";
    expected = await remoteRef(context.top, context.gitRemote, resultRefName(id)).catch(() => expected);
  }
  return `The remote kept refusing ${resultRefName(id)}.`;
}

/**
 * The task's id in this clone's store: its own, unless this very clone sent it (an agent running here
 * delegated it, and this worker took it back): that id names the relay's mirror of it here, and the
 * run gets `<id>.run` beside it.
 */
function localIdFor(context: WorkerContext, id: string): string {
  const mirror = join(taskDirOf(context.root, id), "state.json");
  try {
    return (JSON.parse(readFileSync(mirror, "utf8")) as { remote?: unknown }).remote ? `${id}.run` : id;
  } catch {
    return id;
  }
}

/** Cancels and answers for this task, from the other side, as they come. */
async function followControl(
  context: WorkerContext,
  id: string,
  localId: string,
  dir: string,
  task: HeldTask,
): Promise<() => void> {
  let stopped = false;
  let stopReconnect = () => {};
  let watch: Awaited<ReturnType<WorkerContext["control"]["watch"]>> | undefined;
  const loop = async () => {
    while (!stopped) {
      try {
        watch = await context.control.watch({ key: `${id}.>` });
        const current = watch;
        // After a server restart the watch starts again (it delivers what is there, then what comes).
        const offReconnect = context.cluster.onReconnect(() => current.stop());
        stopReconnect = offReconnect;
        for await (const entry of watch) {
          if (stopped) break;
          if (entry.operation !== "PUT") continue;
          if (entry.key === cancelKey(id)) {
            context.log(`[worker] ${id}: cancel received`);
            task.abort.abort();
            continue;
          }
          const questionId = entry.key.slice(`${id}.answer.`.length);
          const answer = decode(AnswerSchema, entry.value);
          if (!entry.key.startsWith(`${id}.answer.`) || !isValidQuestionId(questionId) || !answer) continue;
          await answerQuestion(
            dir,
            localId,
            questionId,
            answer.answer,
            answer.answered_by ?? "cluster",
          ).catch(() => undefined);
        }
      } catch {
        // the watch is re-established (a server restart)
      }
      stopReconnect();
      if (!stopped) await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  };
  void loop();
  return () => {
    stopped = true;
    watch?.stop();
  };
}

/**
 * A task this worker ran before (its earlier attempt, before a restart): its agent stopped, its worktree
 * and directory removed — what it did is in the log already, and the new attempt starts clean.
 */
async function clearEarlierAttempt(context: WorkerContext, plan: TaskPlan, id: string): Promise<void> {
  const dir = taskDirOf(context.root, id);
  const state = existsSync(dir) ? await readState(dir).catch(() => undefined) : undefined;
  if (
    state?.conductor &&
    state.phase !== "finished" &&
    state.conductor.pid !== process.pid &&
    isProcessAlive(state.conductor)
  ) {
    throw new Error(`process ${state.conductor.pid} still conducts ${id} in this clone`);
  }
  if (state?.agent_process && isProcessAlive(state.agent_process))
    await terminateGroup(state.agent_process.pid);
  const planned = plannedWorktree(plan, id);
  const worktree = state?.worktree ?? planned?.path;
  // Only when there is something: three git commands per task add up on a busy worker.
  if (worktree && (existsSync(worktree) || state))
    await removeWorktree(context.top, worktree, state?.branch ?? planned?.branch ?? null);
  await rm(dir, { recursive: true, force: true });
}

/** Run a NATS operation, retrying while the server is away (a restart), for a minute at most. */
async function retrying<T>(
  context: WorkerContext,
  what: string,
  operation: () => Promise<T>,
): Promise<T | undefined> {
  const deadline = Date.now() + 60_000;
  for (let delay = 250; ; delay = Math.min(delay * 2, 5_000)) {
    try {
      return await operation();
    } catch (error) {
      if (Date.now() > deadline) {
        context.log(`[worker] ${what}: ${messageOf(error)} (giving up)`);
        return undefined;
      }
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
