import { readdir } from "node:fs/promises";
import { readEvents } from "../../engine/store/event-log.js";
import { markFinishedEvents } from "../../engine/store/event-owner.js";
import { projectPaths } from "../../engine/store/project.js";
import { isTerminal } from "../../engine/store/state.js";
import { readTaskText } from "../../engine/store/task-files.js";
import { listTaskIds, readState, taskDirOf } from "../../engine/store/task-store.js";
import { safeParseDocument } from "../../protocol/documents.js";
import type { CaesarEvent } from "../../protocol/event.js";
import { type TaskPaths, taskPaths } from "../../protocol/task-dir.js";
import { isProcessAlive } from "../../support/process.js";
import { type AskedQuestion, TaskActivity } from "./activity.js";
import { FINISHED_LINGER_MS, type WatchedTask } from "./watched-task.js";

/** How long after its state says finished a task's `finished` event may still be on its way. */
const FINISHED_EVENT_GRACE_MS = 2000;

interface TrackedTask extends WatchedTask {
  paths: TaskPaths;
  offset: number;
  /** Whether caesar's own `finished` was read already (a copy after it is the agent's). */
  ownerSeen: { taskEnd: boolean };
  fileQuestions: AskedQuestion[];
  answeredIds: Set<string>;
  /** Question files already read (they are written once, atomically). */
  questionFiles: Set<string>;
}

export interface TaskEvents {
  task: WatchedTask;
  events: CaesarEvent[];
  /** Questions that appeared as files since the last refresh. */
  questions: AskedQuestion[];
  /**
   * The task's state is finished but its stream has no `finished` event, and has had none for a while:
   * the conductor writes the state first and the event after, so a moment without it is normal.
   */
  endedWithoutEvent: boolean;
}

/**
 * Reads the task directories of a project for `caesar watch` — and never writes to them. Each refresh
 * picks up new tasks, re-reads state.json, reads events.jsonl from where it stopped, and lists the
 * question and answer files.
 */
export class WatchSource {
  private readonly tracked = new Map<string, TrackedTask>();
  /** Tasks that ended (or were abandoned) long before the watch began: never shown, never re-read. */
  private readonly ignored = new Set<string>();

  constructor(
    private readonly root: string,
    /** The tasks named on the command line; undefined: every running task. */
    private readonly named: string[] | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  get tasksDir(): string {
    return projectPaths(this.root).tasks;
  }

  tasks(): WatchedTask[] {
    return [...this.tracked.values()];
  }

  /** Directories worth a file watch: the task store, each task directory, its questions and answers. */
  watchedPaths(): string[] {
    const paths = [this.tasksDir];
    for (const task of this.tracked.values()) {
      if (isTerminal(task.state)) continue;
      paths.push(task.paths.dir, task.paths.questions, task.paths.answers);
    }
    return paths;
  }

  /**
   * Have all the named tasks finished, their `finished` event read (or given up on)? False when
   * watching every task: more may start.
   */
  allNamedFinished(): boolean {
    if (this.named === undefined) return false;
    return this.named.every((id) => {
      const task = this.tracked.get(id);
      return (
        task !== undefined &&
        isTerminal(task.state) &&
        (task.activity.finished !== undefined || this.pastGrace(task))
      );
    });
  }

  private pastGrace(task: TrackedTask): boolean {
    const ended = Date.parse(task.state.finished_at ?? task.state.updated_at);
    return Number.isNaN(ended) || this.now() - ended >= FINISHED_EVENT_GRACE_MS;
  }

  async refresh(): Promise<TaskEvents[]> {
    const ids = this.named ?? (await listTaskIds(this.root));
    for (const id of ids) {
      if (!this.tracked.has(id) && !this.ignored.has(id)) await this.discover(id);
    }
    const changes: TaskEvents[] = [];
    for (const task of this.tracked.values()) changes.push(await this.update(task));
    return changes;
  }

  private async discover(id: string): Promise<void> {
    const dir = taskDirOf(this.root, id);
    let state: WatchedTask["state"];
    try {
      state = await readState(dir);
    } catch {
      return; // being created, or broken: try again next time
    }
    const named = this.named !== undefined;
    const live = isLive(state, this.now());
    if (!named) {
      const last = Date.parse(state.finished_at ?? state.updated_at);
      const old = Number.isNaN(last) || this.now() - last > FINISHED_LINGER_MS;
      if ((isTerminal(state) || !live) && old) {
        this.ignored.add(id);
        return;
      }
    }
    this.tracked.set(id, {
      id,
      state,
      activity: new TaskActivity(),
      fileQuestions: [],
      answeredIds: new Set(),
      questionFiles: new Set(),
      live,
      named,
      paths: taskPaths(dir),
      offset: 0,
      ownerSeen: { taskEnd: false },
    });
  }

  private async update(task: TrackedTask): Promise<TaskEvents> {
    const wasFinished = isTerminal(task.state);
    if (!wasFinished) {
      try {
        task.state = await readState(task.paths.dir);
      } catch {
        // keep the last state that read
      }
    }
    task.live = isLive(task.state, this.now());
    const read = await readEvents(task.paths.events, task.offset);
    task.offset = read.offset;
    // A `finished` is the task's end only when caesar's record (read after it) names it: else the agent's.
    const events = read.events.some((event) => event.type === "finished")
      ? markFinishedEvents(
          read.events,
          await readState(task.paths.dir).catch(() => task.state),
          task.ownerSeen,
        )
      : read.events;
    for (const event of events) task.activity.fold(event);
    const questions = wasFinished ? [] : await this.readQuestions(task);
    if (!wasFinished) {
      for (const name of await listJson(task.paths.answers)) task.answeredIds.add(name);
    }
    const endedWithoutEvent =
      isTerminal(task.state) && task.activity.finished === undefined && this.pastGrace(task);
    return { task, events, questions, endedWithoutEvent };
  }

  private async readQuestions(task: TrackedTask): Promise<AskedQuestion[]> {
    const found: AskedQuestion[] = [];
    for (const name of await listJson(task.paths.questions)) {
      if (task.questionFiles.has(name)) continue;
      try {
        const raw = JSON.parse((await readTaskText(`${task.paths.questions}/${name}.json`)) ?? "null");
        const parsed = safeParseDocument("question", raw);
        if (!parsed.ok) continue;
        const asked = Date.parse(parsed.value.asked_at);
        const question: AskedQuestion = {
          id: parsed.value.id,
          question: parsed.value.question,
          options: parsed.value.options,
          askedAt: Number.isNaN(asked) ? undefined : asked,
        };
        task.questionFiles.add(name);
        task.fileQuestions.push(question);
        found.push(question);
      } catch {
        // not readable yet
      }
    }
    return found;
  }
}

/**
 * A task that has not finished counts as live while its conductor runs — or, before it has one, while
 * its state was written recently (a task being created).
 */
function isLive(state: WatchedTask["state"], now: number): boolean {
  if (isTerminal(state)) return false;
  if (state.conductor !== null) return isProcessAlive(state.conductor);
  const updated = Date.parse(state.updated_at);
  return !Number.isNaN(updated) && now - updated <= FINISHED_LINGER_MS;
}

async function listJson(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((name) => name.endsWith(".json")).map((name) => name.slice(0, -5));
  } catch {
    return [];
  }
}
