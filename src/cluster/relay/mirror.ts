import { setMaxListeners } from "node:events";
import { mkdir } from "node:fs/promises";
import type { JsMsg } from "@nats-io/jetstream";
import type { KV } from "@nats-io/kv";
import { ChangeWatch } from "../../engine/store/change-watch.js";
import { EventWriter } from "../../engine/store/event-log.js";
import type { RemoteState } from "../../engine/store/state.js";
import { loadPlan, type TaskPlan } from "../../engine/store/task-plan.js";
import { readState, updateState } from "../../engine/store/task-store.js";
import { taskPaths } from "../../protocol/task-dir.js";
import { messageOf } from "../../support/errors.js";
import { readClaim } from "../claims.js";
import type { Cluster } from "../connection.js";
import { deleteStart } from "../git-refs.js";
import { CLAIMS_BUCKET, CONTROL_BUCKET, LOG_STREAM, logFilter } from "../names.js";
import { sendToQueue } from "../submit.js";
import { type Claim, ClaimSchema, decode } from "../wire.js";
import { Carrier } from "./carry.js";
import { finishFromWorker } from "./finish-from-worker.js";
import { finishHere } from "./finish-here.js";
import { LogApplier } from "./log-applier.js";
import { logStartOf } from "./progress.js";

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
  private readonly applier: LogApplier;
  private readonly events: EventWriter;
  private claim: Claim | undefined;
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
    this.events = new EventWriter(taskPaths(dir).events, id);
    this.applier = new LogApplier(
      id,
      dir,
      this.events,
      (attempt) => {
        const entry = this.claim?.history.find((record) => record.attempt === attempt);
        if (entry?.outcome === "retried") return `attempt ${attempt} failed transiently (${entry.reason})`;
        if (entry?.outcome === "handed_back")
          return `worker ${entry.worker} handed the task back (${entry.reason})`;
        return undefined;
      },
      (attempt) => this.claim?.state === "released" && this.claim.attempt === attempt,
    );
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
      let remote = state.remote;
      if (remote.submitted_at === null) {
        if (!(await this.submit(plan))) return;
        // Sending it recorded where its log starts.
        remote = (await readState(this.dir)).remote ?? remote;
      }
      const claims = await this.cluster.bucket(CLAIMS_BUCKET);
      const control = await this.cluster.bucket(CONTROL_BUCKET);
      await Promise.race([
        Promise.all([this.followLog(remote), this.followClaim(claims, plan), this.followHere(control, plan)]),
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
        await finishHere(
          this.dir,
          plan,
          {
            code: "cancelled_before_queue",
            message: "Cancelled before the task reached the cluster's queue: no worker ran it.",
          },
          "cancelled",
          this.events,
        );
        // Its starting point may have been pushed before the queue was out of reach: no worker fetches it.
        const top = plan.repo_top ?? plan.root;
        if (plan.remote) await deleteStart(top, plan.remote.git_remote, this.id).catch(() => undefined);
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

  private async followLog(remote: RemoteState): Promise<void> {
    while (!this.stop.signal.aborted) {
      try {
        const consumer = await this.cluster.js.consumers.get(LOG_STREAM, {
          filter_subjects: logFilter(this.id),
          ...logStartOf(this.applier.progress, remote),
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
    if (this.finishing) return;
    await this.applier.apply(message, (workerId) =>
      this.claim?.worker.id === workerId ? this.claim.worker.host : undefined,
    );
    if (this.claim?.final) this.maybeFinish();
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
    const changed =
      this.claim?.worker.id !== claim.worker.id ||
      this.claim?.attempt !== claim.attempt ||
      this.claim?.state !== claim.state ||
      this.claim?.history.length !== claim.history.length;
    this.claim = claim;
    if (changed) {
      await updateState(this.dir, (state) =>
        state.phase === "finished" || !state.remote
          ? undefined
          : {
              ...state,
              // Back in the queue (retried after a transient failure, or handed back): waiting again.
              phase: claim.state === "released" ? "queued" : state.phase,
              remote: {
                ...state.remote,
                worker: { id: claim.worker.id, host: claim.worker.host },
                attempt: claim.attempt,
                lost: claim.lost,
                attempts: claim.history,
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
    const caughtUp = this.applier.progress.log_seq >= final.log_seq;
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
        `[relay] ${this.id}: the log stops at ${this.applier.progress.log_seq}, the worker published up to ${final.log_seq}`,
      );
    const claim = this.claim!;
    this.finishing = (async () => {
      try {
        await finishFromWorker({
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
    const carrier = new Carrier(this.id, this.dir, this.cluster, control, this.log);
    try {
      while (!this.stop.signal.aborted) {
        try {
          if (await carrier.carryCancel(plan, this.claim !== undefined, this.events)) this.stop.abort();
          await carrier.carryAnswers();
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
