import { stat } from "node:fs/promises";
import { join } from "node:path";
import { ChangeWatch } from "../../engine/store/change-watch.js";
import { readEvents } from "../../engine/store/event-log.js";
import type { TaskState } from "../../engine/store/state.js";
import { openTaskFileOrNothing, readTaskText } from "../../engine/store/task-files.js";
import { readState } from "../../engine/store/task-store.js";
import { isValidQuestionId } from "../../protocol/ids.js";
import { taskPaths } from "../../protocol/task-dir.js";
import type { Outbox } from "../outbox.js";
import type { StateSnapshot } from "../wire.js";

/** Raw output goes out in pieces of at most this much (NATS messages are ≤ 1 MiB by default). */
const RAW_CHUNK = 64 * 1024;

/**
 * Publishes what a task running on this worker writes into its directory — events, raw output, state
 * changes, questions — as it is written, by following the files (the task directory is the whole
 * state: whatever writes into it, the conductor, the agent, the return channel, is published alike).
 */
export class TaskPublisher {
  private eventsOffset = 0;
  private rawOffset = 0;
  private lastSnapshot = "";
  private readonly watch: ChangeWatch;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly stop = new AbortController();

  constructor(
    private readonly dir: string,
    private readonly outbox: Outbox,
  ) {
    this.watch = new ChangeWatch(dir, { pollMs: 250 });
  }

  start(): void {
    this.running = (async () => {
      while (!this.stopped) {
        await this.pump().catch(() => undefined);
        await this.watch.next(1_000, this.stop.signal);
      }
    })();
  }

  /** Publish what is left, then stop following. */
  async finish(): Promise<void> {
    this.stopped = true;
    this.stop.abort();
    await this.running;
    this.watch.close();
    await this.pump();
  }

  private async pump(): Promise<void> {
    const paths = taskPaths(this.dir);
    const state = await readState(this.dir).catch(() => undefined);
    if (state) this.publishState(state);
    const read = await readEvents(paths.events, this.eventsOffset);
    this.eventsOffset = read.offset;
    for (const event of read.events) {
      // The question document goes before its event, so the other side can show it as soon as it is asked.
      if (event.type === "question") await this.publishQuestion(event.question_id);
      this.outbox.publish("event", JSON.stringify(event));
    }
    await this.publishRaw(paths.raw);
  }

  private publishState(state: TaskState): void {
    const snapshot: StateSnapshot = {
      phase: state.phase,
      started_at: state.started_at,
      deadline_at: state.deadline_at,
      command: state.command,
      agent_pid: state.agent_process?.pid ?? null,
      worktree: state.worktree,
      branch: state.branch,
      base_ref: state.base_ref,
      start_tree: state.start_tree,
    };
    const text = JSON.stringify(snapshot);
    if (text === this.lastSnapshot) return;
    this.lastSnapshot = text;
    this.outbox.publish("state", text);
  }

  private async publishQuestion(questionId: string): Promise<void> {
    if (!isValidQuestionId(questionId)) return;
    try {
      const text = await readTaskText(join(taskPaths(this.dir).questions, `${questionId}.json`));
      if (text !== undefined) this.outbox.publish("question", text);
    } catch {
      // asked without a question file: the event alone goes
    }
  }

  private async publishRaw(path: string): Promise<void> {
    let size: number;
    try {
      size = (await stat(path)).size;
    } catch {
      return;
    }
    if (size <= this.rawOffset) return;
    const handle = await openTaskFileOrNothing(path, "read", { maxBytes: Number.MAX_SAFE_INTEGER });
    if (!handle) return;
    try {
      while (this.rawOffset < size) {
        const length = Math.min(RAW_CHUNK, size - this.rawOffset);
        const buffer = Buffer.alloc(length);
        const { bytesRead } = await handle.read(buffer, 0, length, this.rawOffset);
        if (bytesRead === 0) break;
        this.outbox.publish("raw", buffer.subarray(0, bytesRead));
        this.rawOffset += bytesRead;
      }
    } finally {
      await handle.close();
    }
  }
}
