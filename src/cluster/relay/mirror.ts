import { setMaxListeners } from "node:events";
import { appendFile, mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { DeliverPolicy, type JsMsg } from "@nats-io/jetstream";
import type { KV } from "@nats-io/kv";
import { readAnswer } from "../../engine/questions/ask.js";
import { ChangeWatch } from "../../engine/store/change-watch.js";
import { EventWriter } from "../../engine/store/event-log.js";
import type { TaskState } from "../../engine/store/state.js";
import { loadPlan, type TaskPlan } from "../../engine/store/task-plan.js";
import { readState, updateState } from "../../engine/store/task-store.js";
import { QuestionSchema } from "../../protocol/channel-documents.js";
import { safeParseDocument } from "../../protocol/documents.js";
import { isValidQuestionId } from "../../protocol/ids.js";
import { taskPaths } from "../../protocol/task-dir.js";
import { writeJsonAtomic } from "../../support/atomic-file.js";
import { messageOf } from "../../support/errors.js";
import { isCasConflict } from "../cas.js";
import { readClaim } from "../claims.js";
import type { Cluster } from "../connection.js";
import {
  answerKey,
  CLAIMS_BUCKET,
  CONTROL_BUCKET,
  cancelKey,
  HEADER_ATTEMPT,
  HEADER_COUNTER,
  HEADER_WORKER,
  LOG_STREAM,
  logFilter,
  TASKS_STREAM,
} from "../names.js";
import { sendToQueue } from "../submit.js";
import { type Claim, ClaimSchema, decode, encode, StateSnapshotSchema } from "../wire.js";
import { concludeHere } from "./conclude-here.js";
import { finalizeHere } from "./finalize.js";
import { alreadyWritten, loadProgress, type MirrorProgress, saveProgress } from "./progress.js";

const CLAIM_POLL_MS = 5_000;
/** After the final claim, how long to wait for log messages still on their way before writing it. */
const CATCH_UP_MS = 30_000;

/**
 * One remote task, followed by the relay: what its worker publishes (events, raw output, state, questions)
 * is written into its task directory here, and what happens here (a cancel, an answer) is carried to the
 * worker — until the claim says it finished, when the final state is written and the mirror ends.
 */
export class TaskMirror {
  private readonly stop = new AbortController();
  private progress: MirrorProgress;
  private skip: { lines: number; rawBytes: number };
  private readonly events: EventWriter;
  private claim: Claim | undefined;
  private cancelSent = false;
  private readonly answersSent = new Set<string>();
  private finishing: Promise<void> | undefined;
  private finalSeenAt = 0;
  private restartLog: () => void = () => {};
  private restartedForFinal = false;

  constructor(
    readonly id: string,
    private readonly dir: string,
    private readonly cluster: Cluster,
    private readonly log: (line: string) => void,
  ) {
    this.progress = loadProgress(dir);
    this.skip = alreadyWritten(dir, this.progress);
    this.events = new EventWriter(taskPaths(dir).events, id);
    // Every wait of the mirror listens to this one signal.
    setMaxListeners(1_000, this.stop.signal);
  }

  /** Follow the task until it is finished here (or the relay stops). */
  async run(signal: AbortSignal): Promise<void> {
    const onAbort = () => this.stop.abort();
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      const plan = await loadPlan(this.dir);
      const state = await readState(this.dir);
      if (state.phase === "finished" || !state.remote) return;
      if (state.remote.submitted_at === null && !(await this.submit(plan))) return;
      const claims = await this.cluster.bucket(CLAIMS_BUCKET);
      const control = await this.cluster.bucket(CONTROL_BUCKET);
      await Promise.race([
        Promise.all([this.followLog(state), this.followClaim(claims, plan), this.followHere(control, plan)]),
        new Promise<void>((resolve) =>
          this.stop.signal.addEventListener("abort", () => resolve(), { once: true }),
        ),
      ]);
      await this.finishing;
    } catch (error) {
      this.log(`[relay] ${this.id}: ${messageOf(error)}`);
    } finally {
      signal.removeEventListener("abort", onAbort);
      this.stop.abort();
    }
  }

  /** The front end could not reach the queue: send the task now, retrying while nobody cancels it. */
  private async submit(plan: TaskPlan): Promise<boolean> {
    for (let delay = 500; !this.stop.signal.aborted; delay = Math.min(delay * 2, 10_000)) {
      const state = await readState(this.dir);
      if (state.phase === "finished") return false;
      if (state.cancel_requested) {
        await concludeHere(
          this.dir,
          plan,
          {
            code: "cancelled_before_queue",
            message: "Cancelled before the task reached the cluster's queue: no worker ran it.",
          },
          "cancelled",
          this.events,
        );
        return false;
      }
      try {
        await sendToQueue(this.cluster, { id: this.id, dir: this.dir }, plan);
        return true;
      } catch (error) {
        this.log(`[relay] ${this.id}: could not send it to the queue yet: ${messageOf(error)}`);
        await sleep(delay, this.stop.signal);
      }
    }
    return false;
  }

  // ---- the worker's log, into the task directory ----

  private async followLog(state: TaskState): Promise<void> {
    while (!this.stop.signal.aborted) {
      try {
        // The first time, start at the task's creation (less a margin for clocks) rather than scan the log.
        const start =
          this.progress.log_seq > 0
            ? { opt_start_seq: this.progress.log_seq + 1 }
            : {
                deliver_policy: DeliverPolicy.StartTime,
                opt_start_time: new Date(Date.parse(state.created_at) - 300_000).toISOString(),
              };
        const consumer = await this.cluster.js.consumers.get(LOG_STREAM, {
          filter_subjects: logFilter(this.id),
          ...start,
        });
        const messages = await consumer.consume();
        const closeOnStop = () => void messages.close();
        this.stop.signal.addEventListener("abort", closeOnStop, { once: true });
        // After a server restart (or when the final says more was published), start again from the last
        // message applied.
        const offReconnect = this.cluster.onReconnect(closeOnStop);
        this.restartLog = closeOnStop;
        try {
          for await (const message of messages) {
            await this.apply(message);
            if (this.stop.signal.aborted) break;
          }
        } finally {
          offReconnect();
          this.stop.signal.removeEventListener("abort", closeOnStop);
          await messages.close();
        }
      } catch (error) {
        if (!this.stop.signal.aborted) this.log(`[relay] ${this.id}: log: ${messageOf(error)}`);
      }
      await sleep(1_000, this.stop.signal);
    }
  }

  private async apply(message: JsMsg): Promise<void> {
    // Once the final state is being written, nothing more goes into the task's files.
    if (message.seq <= this.progress.log_seq || this.finishing) return;
    const attempt = Number(message.headers?.get(HEADER_ATTEMPT) ?? "0");
    const counter = Number(message.headers?.get(HEADER_COUNTER) ?? "0");
    const worker = message.headers?.get(HEADER_WORKER) ?? "";
    const kind = message.subject.slice(message.subject.lastIndexOf(".") + 1);
    const stale =
      attempt < this.progress.attempt ||
      (attempt === this.progress.attempt && counter <= this.progress.counter);
    if (!stale) {
      if (attempt > this.progress.attempt) await this.beginAttempt(attempt, worker);
      this.progress.counter = counter;
      if (kind === "event") await this.applyEvent(message.data);
      else if (kind === "raw") await this.applyRaw(message.data);
      else if (kind === "state") await this.applyState(message.data, worker);
      else if (kind === "question") await this.applyQuestion(message.data);
    }
    this.progress.log_seq = message.seq;
    await saveProgress(this.dir, this.progress);
    if (this.claim?.final) this.maybeFinish();
  }

  /** A message of a later attempt: the task runs again elsewhere, its earlier worker lost. */
  private async beginAttempt(attempt: number, worker: string): Promise<void> {
    const previous = this.progress.attempt;
    this.progress.attempt = attempt;
    this.progress.counter = 0;
    if (previous > 0) {
      await this.writeEvent({
        type: "progress",
        message: `attempt ${attempt} on worker ${worker}: the previous worker was lost`,
      });
    }
  }

  private async writeEvent(body: Parameters<EventWriter["append"]>[0], at?: string): Promise<void> {
    await this.events.append(body, at);
    this.progress.lines += 1;
  }

  private async applyEvent(data: Uint8Array): Promise<void> {
    if (this.skip.lines > 0) {
      this.skip.lines -= 1;
      this.progress.lines += 1;
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(new TextDecoder().decode(data));
    } catch {
      return;
    }
    const event = safeParseDocument("event", parsed);
    // The engine here writes the one `finished` event, from the final state (as for a local task).
    if (!event.ok || event.value.type === "finished") return;
    const { protocol: _p, seq: _s, at, task_id: _t, ...body } = event.value;
    await this.writeEvent(body as Parameters<EventWriter["append"]>[0], at);
  }

  private async applyRaw(data: Uint8Array): Promise<void> {
    let chunk = data;
    if (this.skip.rawBytes > 0) {
      const skipped = Math.min(this.skip.rawBytes, chunk.length);
      this.skip.rawBytes -= skipped;
      this.progress.raw_bytes += skipped;
      chunk = chunk.subarray(skipped);
    }
    if (chunk.length === 0) return;
    await appendFile(taskPaths(this.dir).raw, chunk);
    this.progress.raw_bytes += chunk.length;
  }

  private async applyState(data: Uint8Array, workerId: string): Promise<void> {
    const snapshot = decode(StateSnapshotSchema, data);
    if (!snapshot) return;
    const host = this.claim?.worker.id === workerId ? this.claim.worker.host : undefined;
    await updateState(this.dir, (state) => {
      if (state.phase === "finished" || !state.remote) return undefined;
      return {
        ...state,
        // The final state is written from the claim, never from a snapshot.
        phase: snapshot.phase === "finished" ? "finishing" : snapshot.phase,
        started_at: snapshot.started_at,
        deadline_at: snapshot.deadline_at,
        command: snapshot.command,
        base_ref: snapshot.base_ref ?? state.base_ref,
        start_tree: snapshot.start_tree ?? state.start_tree,
        remote: {
          ...state.remote,
          worker: { id: workerId, host: host ?? state.remote.worker?.host ?? "" },
          attempt: this.progress.attempt,
          agent_pid: snapshot.agent_pid,
          worktree: snapshot.worktree,
          branch: snapshot.branch,
        },
      };
    });
  }

  private async applyQuestion(data: Uint8Array): Promise<void> {
    const question = decode(QuestionSchema, data);
    // Asked under the id of the run on the worker (the same, or `<id>.run`): here it is this task's.
    if (!question?.task_id.startsWith(this.id) || !isValidQuestionId(question.id)) return;
    const questions = taskPaths(this.dir).questions;
    await mkdir(questions, { recursive: true });
    await writeJsonAtomic(join(questions, `${question.id}.json`), { ...question, task_id: this.id });
  }

  // ---- the claim: who runs it, and how it ended ----

  private async followClaim(claims: KV, plan: TaskPlan): Promise<void> {
    const poll = async () => {
      const read = await readClaim(claims, this.id).catch(() => undefined);
      if (read) await this.onClaim(read.claim, plan);
    };
    // A watch for promptness, a poll in case the watch is being re-established after a server restart.
    void (async () => {
      while (!this.stop.signal.aborted) {
        try {
          const watch = await claims.watch({ key: this.id });
          const closeOnStop = () => watch.stop();
          this.stop.signal.addEventListener("abort", closeOnStop, { once: true });
          const offReconnect = this.cluster.onReconnect(closeOnStop);
          try {
            for await (const entry of watch) {
              if (entry.operation !== "PUT") continue;
              const claim = decode(ClaimSchema, entry.value);
              if (claim) await this.onClaim(claim, plan);
              if (this.stop.signal.aborted) break;
            }
          } finally {
            offReconnect();
            this.stop.signal.removeEventListener("abort", closeOnStop);
          }
        } catch {
          // re-established below
        }
        await sleep(1_000, this.stop.signal);
      }
    })();
    while (!this.stop.signal.aborted) {
      await poll();
      await sleep(CLAIM_POLL_MS, this.stop.signal);
    }
  }

  private async onClaim(claim: Claim, plan: TaskPlan): Promise<void> {
    if (this.claim && claim.attempt < this.claim.attempt) return;
    const changedWorker = this.claim?.worker.id !== claim.worker.id || this.claim?.attempt !== claim.attempt;
    this.claim = claim;
    if (changedWorker) {
      await updateState(this.dir, (state) =>
        state.phase === "finished" || !state.remote
          ? undefined
          : {
              ...state,
              remote: {
                ...state.remote,
                worker: { id: claim.worker.id, host: claim.worker.host },
                attempt: claim.attempt,
                lost: claim.lost,
              },
            },
      );
    }
    if (claim.final) {
      if (this.finalSeenAt === 0) this.finalSeenAt = Date.now();
      this.maybeFinish(plan);
    }
  }

  /** Write the final state once the log is mirrored up to the final's last message (or waited for long enough). */
  private maybeFinish(plan?: TaskPlan): void {
    const final = this.claim?.final;
    if (!final || this.finishing) return;
    const caughtUp = this.progress.log_seq >= final.log_seq;
    const waited = Date.now() - this.finalSeenAt > CATCH_UP_MS;
    if (!caughtUp && !waited) {
      // Published, not here yet: read the log again from where the mirror is (once), and check again when
      // the wait runs out, in case no message comes to trigger it.
      if (!this.restartedForFinal) {
        this.restartedForFinal = true;
        this.restartLog();
      }
      setTimeout(() => this.maybeFinish(plan), CATCH_UP_MS + 100).unref();
      return;
    }
    if (!caughtUp)
      this.log(
        `[relay] ${this.id}: the log stops at ${this.progress.log_seq}, the worker published up to ${final.log_seq}`,
      );
    const claim = this.claim!;
    this.finishing = (async () => {
      try {
        await finalizeHere({
          dir: this.dir,
          plan: plan ?? (await loadPlan(this.dir)),
          claim,
          events: this.events,
          cluster: this.cluster,
          log: this.log,
        });
      } catch (error) {
        this.log(`[relay] ${this.id}: could not write the final state: ${messageOf(error)}`);
      }
      this.stop.abort();
    })();
  }

  // ---- what happens here: cancels and answers, carried to the worker ----

  private async followHere(control: KV, plan: TaskPlan): Promise<void> {
    const paths = taskPaths(this.dir);
    await mkdir(paths.answers, { recursive: true });
    const watchDir = new ChangeWatch(this.dir, { pollMs: 500 });
    const watchAnswers = new ChangeWatch(paths.answers, { pollMs: 500 });
    try {
      while (!this.stop.signal.aborted) {
        try {
          await this.carryCancel(control, plan);
          await this.carryAnswers(control);
        } catch (error) {
          this.log(`[relay] ${this.id}: ${messageOf(error)}`);
        }
        await Promise.race([
          watchDir.next(2_000, this.stop.signal),
          watchAnswers.next(2_000, this.stop.signal),
        ]);
      }
    } finally {
      watchDir.close();
      watchAnswers.close();
    }
  }

  private async carryCancel(control: KV, plan: TaskPlan): Promise<void> {
    if (this.cancelSent) return;
    const state = await readState(this.dir);
    if (!state.cancel_requested || state.phase === "finished") return;
    await control.put(cancelKey(this.id), encode(state.cancel_requested));
    this.cancelSent = true;
    this.log(`[relay] ${this.id}: cancel sent`);
    // Nobody took it yet: take it out of the queue, and end it here.
    const claims = await this.cluster.bucket(CLAIMS_BUCKET);
    if (this.claim || (await readClaim(claims, this.id))) return;
    const seq = state.remote?.queue_seq;
    const removed = seq
      ? await this.cluster.jsm.streams.deleteMessage(TASKS_STREAM, seq, false).catch(() => false)
      : false;
    if (removed && !(await readClaim(claims, this.id))) {
      await concludeHere(
        this.dir,
        plan,
        {
          code: "cancelled_in_queue",
          message: "Cancelled while waiting in the cluster's queue: no worker ran it.",
        },
        "cancelled",
        this.events,
      );
      this.stop.abort();
    }
  }

  private async carryAnswers(control: KV): Promise<void> {
    let names: string[];
    try {
      names = await readdir(taskPaths(this.dir).answers);
    } catch {
      return;
    }
    for (const name of names) {
      if (!name.endsWith(".json")) continue;
      const questionId = name.slice(0, -".json".length);
      if (!isValidQuestionId(questionId) || this.answersSent.has(questionId)) continue;
      const answer = await readAnswer(this.dir, questionId);
      if (!answer) continue;
      try {
        await control.create(answerKey(this.id, questionId), encode(answer));
      } catch (error) {
        // There already: the first answer is the one the worker got. Anything else is tried again.
        if (!isCasConflict(error)) throw error;
      }
      this.answersSent.add(questionId);
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
