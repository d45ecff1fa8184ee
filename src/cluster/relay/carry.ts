import { readdir } from "node:fs/promises";
import type { KV } from "@nats-io/kv";
import { readAnswer } from "../../engine/questions/ask.js";
import type { EventWriter } from "../../engine/store/event-log.js";
import type { TaskPlan } from "../../engine/store/task-plan.js";
import { readState } from "../../engine/store/task-store.js";
import { isValidQuestionId } from "../../protocol/ids.js";
import { taskPaths } from "../../protocol/task-dir.js";
import { messageOf } from "../../support/errors.js";
import { isCasConflict } from "../cas.js";
import { finishClaim, readClaim } from "../claims.js";
import type { Cluster } from "../connection.js";
import { deleteStart } from "../git-refs.js";
import { answerKey, CLAIMS_BUCKET, cancelKey, TASKS_STREAM } from "../names.js";
import { type Claim, encode, type Final } from "../wire.js";
import { finishHere } from "./finish-here.js";

/** What happens here to a remote task — a cancel, an answer — carried to its worker through `caesar-control`. */
export class Carrier {
  private cancelSent = false;
  private readonly answersSent = new Set<string>();

  constructor(
    private readonly id: string,
    private readonly dir: string,
    private readonly cluster: Cluster,
    private readonly control: KV,
    private readonly log: (line: string) => void,
  ) {}

  /**
   * A cancel asked here goes to the worker. When nobody took the task yet, it is taken out of the queue
   * and ended here (true: the task is over).
   */
  async carryCancel(plan: TaskPlan, claimed: boolean, events: EventWriter): Promise<boolean> {
    if (this.cancelSent) return false;
    const state = await readState(this.dir);
    if (!state.cancel_requested || state.phase === "finished") return false;
    await this.control.put(cancelKey(this.id), encode(state.cancel_requested));
    this.cancelSent = true;
    this.log(`[relay] ${this.id}: cancel sent`);
    // Nobody took it yet: take it out of the queue, and end it here.
    const claims = await this.cluster.bucket(CLAIMS_BUCKET);
    const current = await readClaim(claims, this.id);
    // Back in the queue, waiting for its next attempt (a retry's backoff, a hand-back): ended in its claim
    // now — no worker runs it again, and the one that gets the message only acks it.
    if (
      current?.claim.state === "released" &&
      (await this.endReleased(claims, current.claim, current.revision))
    ) {
      const seq = state.remote?.queue_seq;
      if (seq) await this.cluster.jsm.streams.deleteMessage(TASKS_STREAM, seq, false).catch(() => false);
    }
    if (claimed || current) return false;
    const seq = state.remote?.queue_seq;
    const removed = seq
      ? await this.cluster.jsm.streams.deleteMessage(TASKS_STREAM, seq, false).catch(() => false)
      : false;
    if (removed && !(await readClaim(claims, this.id))) {
      await finishHere(
        this.dir,
        plan,
        {
          code: "cancelled_in_queue",
          message: "Cancelled while waiting in the cluster's queue: no worker ran it.",
        },
        "cancelled",
        events,
      );
      // No worker will fetch it: its starting point's ref leaves the remote with it.
      const remote = (await readState(this.dir)).remote;
      if (remote)
        await deleteStart(plan.repo_top ?? plan.root, remote.git_remote, this.id).catch(() => undefined);
      return true;
    }
    return false;
  }

  /** Finish a released claim as cancelled (only if it did not change since it was read). */
  private async endReleased(claims: KV, claim: Claim, revision: number): Promise<boolean> {
    const at = new Date().toISOString();
    const final: Final = {
      outcome: "cancelled",
      exit: null,
      report_status: null,
      report: null,
      error: {
        code: "cancelled_in_queue",
        message: `Cancelled while back in the cluster's queue after attempt ${claim.attempt}: no worker runs it again.`,
      },
      started_at: null,
      finished_at: at,
      deadline_at: null,
      command: null,
      base_ref: null,
      start_tree: null,
      end_tree: null,
      result_commit: null,
      log_seq: 0,
    };
    try {
      // False: a worker took it meanwhile; the cancel reaches it through caesar-control.
      const ended = await finishClaim(claims, claim, revision, final);
      if (ended) this.log(`[relay] ${this.id}: cancelled while waiting for attempt ${claim.attempt + 1}`);
      return ended;
    } catch (error) {
      this.log(`[relay] ${this.id}: could not end its released claim: ${messageOf(error)}`);
      return false;
    }
  }

  /** Answers written here go to the worker, each once (the first one there is the one it gets). */
  async carryAnswers(): Promise<void> {
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
        await this.control.create(answerKey(this.id, questionId), encode(answer));
      } catch (error) {
        // There already: the first answer is the one the worker got. Anything else is tried again.
        if (!isCasConflict(error)) throw error;
      }
      this.answersSent.add(questionId);
    }
  }
}
