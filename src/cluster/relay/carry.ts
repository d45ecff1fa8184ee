import { readdir } from "node:fs/promises";
import type { KV } from "@nats-io/kv";
import { readAnswer } from "../../engine/questions/ask.js";
import type { EventWriter } from "../../engine/store/event-log.js";
import type { TaskPlan } from "../../engine/store/task-plan.js";
import { readState } from "../../engine/store/task-store.js";
import { isValidQuestionId } from "../../protocol/ids.js";
import { taskPaths } from "../../protocol/task-dir.js";
import { isCasConflict } from "../cas.js";
import { readClaim } from "../claims.js";
import type { Cluster } from "../connection.js";
import { deleteStart } from "../git-refs.js";
import { answerKey, CLAIMS_BUCKET, cancelKey, TASKS_STREAM } from "../names.js";
import { encode } from "../wire.js";
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
    if (claimed || (await readClaim(claims, this.id))) return false;
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
