import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { JsMsg } from "@nats-io/jetstream";
import type { EventWriter } from "../../engine/store/event-log.js";
import { appendTaskText } from "../../engine/store/task-files.js";
import { updateState } from "../../engine/store/task-store.js";
import { safeParseDocument } from "../../protocol/documents.js";
import { isValidQuestionId } from "../../protocol/ids.js";
import { QuestionSchema } from "../../protocol/questions.js";
import { taskPaths } from "../../protocol/task-dir.js";
import { writeJsonAtomic } from "../../support/atomic-file.js";
import { HEADER_ATTEMPT, HEADER_COUNTER, HEADER_WORKER } from "../names.js";
import { decode, StateSnapshotSchema } from "../wire.js";
import { alreadyWritten, loadProgress, type MirrorProgress, saveProgress } from "./progress.js";

/**
 * Writes what a worker publishes about a task into its task directory here: events (renumbered after
 * the relay's own, the worker's `finished` left out — the final state writes the one `finished`), raw
 * output, state changes, questions. Messages of an attempt given up on are dropped; a duplicate (a
 * retry after a server restart) is applied once; after a relay restart, what the files already hold is
 * not written again.
 */
export class LogApplier {
  readonly progress: MirrorProgress;
  private readonly skip: { lines: number; rawBytes: number };

  constructor(
    private readonly id: string,
    private readonly dir: string,
    private readonly events: EventWriter,
    /** How an earlier attempt ended, as the claim says (undefined: not known here yet). */
    private readonly previousEnd?: (attempt: number) => string | undefined,
    /** Is this attempt back in the queue (retried, handed back), as the claim says? */
    private readonly released?: (attempt: number) => boolean,
  ) {
    this.progress = loadProgress(dir);
    this.skip = alreadyWritten(dir, this.progress);
  }

  /** Apply one log message (each once: by its stream sequence, its attempt and its counter). */
  async apply(message: JsMsg, hostOf: (workerId: string) => string | undefined): Promise<void> {
    if (message.seq <= this.progress.log_seq) return;
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
      else if (kind === "state") await this.applyState(message.data, worker, hostOf(worker));
      else if (kind === "question") await this.applyQuestion(message.data);
    }
    this.progress.log_seq = message.seq;
    await saveProgress(this.dir, this.progress);
  }

  /** A message of a later attempt: the task runs again elsewhere, its earlier worker lost. */
  private async beginAttempt(attempt: number, worker: string): Promise<void> {
    const previous = this.progress.attempt;
    this.progress.attempt = attempt;
    this.progress.counter = 0;
    if (previous > 0) {
      const why = this.previousEnd?.(previous);
      await this.writeEvent({
        type: "progress",
        message: `attempt ${attempt} on worker ${worker}: ${why ?? "the previous worker was lost"}`,
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
    await appendTaskText(taskPaths(this.dir).raw, chunk);
    this.progress.raw_bytes += chunk.length;
  }

  private async applyState(data: Uint8Array, workerId: string, host: string | undefined): Promise<void> {
    const snapshot = decode(StateSnapshotSchema, data);
    if (!snapshot) return;
    await updateState(this.dir, (state) => {
      if (state.phase === "finished" || !state.remote) return undefined;
      return {
        ...state,
        // The final state is written from the claim, never from a snapshot; an attempt that ended and
        // went back to the queue (its claim released, perhaps before its last snapshot got here) waits there.
        phase:
          snapshot.phase !== "finished"
            ? snapshot.phase
            : this.released?.(this.progress.attempt)
              ? "queued"
              : "finishing",
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
}
