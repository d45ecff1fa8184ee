import { randomUUID } from "node:crypto";
import { mkdir, stat } from "node:fs/promises";
import { needsConductor, recoverTask } from "../../engine/lifecycle/recover.js";
import { RAW_OUTPUT_FILES, watchPath } from "../../engine/store/change-watch.js";
import { projectPaths } from "../../engine/store/project.js";
import { listTaskIds } from "../../engine/store/task-store.js";
import {
  type IndexedTask,
  loadIndexedTask,
  refreshIndexedTask,
  stampOf,
  type TaskPart,
} from "./indexed-task.js";
import { mapLimit } from "./map-limit.js";
import { type NewEntry, Timeline, type TimelineEntry } from "./timeline.js";

export interface IndexChange {
  revision: number;
  tasks: IndexedTask[];
  entries: TimelineEntry[];
}

export interface TaskIndexOptions {
  /** How often finished tasks are checked for changes made by other processes (apply, gc), in ms. */
  sweepMs?: number;
  /** Watch the files at all (off for one-shot uses such as a benchmark baseline). */
  watch?: boolean;
}

/**
 * The server's index of a workspace's task store: derived from the task directories, rebuilt at start,
 * never the source of truth. It keeps each task's state, its questions, and the byte range of each event
 * in events.jsonl (not the events), plus a timeline of all entries. It follows changes incrementally:
 * fs.watch (with polling) on the store for new tasks and on each running task's directory; finished tasks
 * (which only change through `apply` or `gc`) are checked by a slow sweep of stat() calls.
 *
 * `revision` increases by one for every batch of observed changes; `runId` is minted when the index is
 * built, so a revision is only meaningful together with its runId.
 */
export class TaskIndex {
  readonly runId = randomUUID();
  revision = 0;
  readonly timeline = new Timeline();
  buildMs = 0;

  private readonly tasks = new Map<string, IndexedTask>();
  private readonly byChange = new Map<number, IndexedTask>();
  private sorted: IndexedTask[] | null = null;
  private readonly listeners = new Set<(change: IndexChange) => void>();
  private readonly dirty = new Set<string>();
  private readonly pending = new Set<string>();
  private readonly watchers = new Map<string, () => void>();
  private readonly finishing = new Set<string>();
  private scanRequested = false;
  private storeStamp = "";
  private draining: Promise<void> | null = null;
  private sweeping = false;
  private stopStoreWatch: (() => void) | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private closed = false;

  private constructor(
    readonly root: string,
    private readonly options: TaskIndexOptions,
  ) {}

  /** Build the index from the task directories, then follow them. */
  static async open(root: string, options: TaskIndexOptions = {}): Promise<TaskIndex> {
    const index = new TaskIndex(root, options);
    await index.build();
    if (options.watch !== false) index.watch();
    return index;
  }

  get tasksDir(): string {
    return projectPaths(this.root).tasks;
  }

  task(id: string): IndexedTask | undefined {
    const task = this.tasks.get(id);
    return task && !task.removed ? task : undefined;
  }

  byChangeNumber(number: number): IndexedTask | undefined {
    const task = this.byChange.get(number);
    return task && !task.removed ? task : undefined;
  }

  /** Every task, newest change number first. */
  list(): IndexedTask[] {
    this.sorted ??= [...this.tasks.values()]
      .filter((task) => !task.removed)
      .sort(
        (a, b) =>
          (b.state.change_number ?? 0) - (a.state.change_number ?? 0) ||
          b.state.created_at.localeCompare(a.state.created_at),
      );
    return this.sorted;
  }

  get size(): number {
    return this.list().length;
  }

  onChange(listener: (change: IndexChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Re-read the given tasks (and look for new ones) now, and resolve once the index reflects the files —
   * what a mutation does before checking a revision and after acting, so neither waits for a watcher.
   */
  async refresh(ids: readonly string[] = []): Promise<void> {
    for (const id of ids) this.dirty.add(id);
    this.scanRequested = true;
    do await this.kick();
    while (!this.closed && (ids.some((id) => this.dirty.has(id)) || this.scanRequested));
  }

  close(): void {
    this.closed = true;
    this.stopStoreWatch?.();
    for (const stop of this.watchers.values()) stop();
    this.watchers.clear();
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.listeners.clear();
  }

  private async build(): Promise<void> {
    const started = performance.now();
    await mkdir(this.tasksDir, { recursive: true });
    this.storeStamp = await stampOf(this.tasksDir);
    const ids = await listTaskIds(this.root);
    const loaded = await mapLimit(ids, 32, async (id) => ({
      id,
      result: await loadIndexedTask(this.root, id),
    }));
    const entries: NewEntry[] = [];
    for (const { id, result } of loaded) {
      if (!result) {
        this.pending.add(id);
        continue;
      }
      this.add(result.task);
      entries.push(...result.entries);
    }
    // At build time the order is the entries' own timestamps (then task, then line); afterwards it is the
    // order in which they are observed.
    entries.sort(
      (a, b) =>
        a.time - b.time ||
        (a.task.id < b.task.id ? -1 : a.task.id > b.task.id ? 1 : 0) ||
        a.ordinal - b.ordinal,
    );
    this.timeline.append(entries);
    this.buildMs = performance.now() - started;
  }

  private add(task: IndexedTask): void {
    this.tasks.set(task.id, task);
    const number = task.state.change_number;
    if (number !== null) {
      const other = this.byChange.get(number);
      if (!other || other.state.created_at <= task.state.created_at) this.byChange.set(number, task);
    }
    this.sorted = null;
  }

  private watch(): void {
    this.stopStoreWatch = watchPath(this.tasksDir, () => this.requestScan());
    for (const task of this.tasks.values()) this.follow(task);
    const sweepMs = this.options.sweepMs ?? 5000;
    this.sweepTimer = setInterval(() => void this.sweep(), sweepMs);
    this.sweepTimer.unref();
  }

  private requestScan(): void {
    this.scanRequested = true;
    void this.kick();
  }

  private schedule(id: string): void {
    this.dirty.add(id);
    void this.kick();
  }

  private kick(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.draining ??= this.drain().finally(() => {
      this.draining = null;
      if (this.scanRequested || this.dirty.size > 0) void this.kick();
    });
    return this.draining;
  }

  /** Process requested work until none is left; each pass that changed something is one new revision. */
  private async drain(): Promise<void> {
    while ((this.scanRequested || this.dirty.size > 0) && !this.closed) {
      const changed = new Map<IndexedTask, Set<TaskPart>>();
      const entries: NewEntry[] = [];
      try {
        if (this.scanRequested) {
          this.scanRequested = false;
          await this.scanStore(changed, entries);
        }
        const ids = [...this.dirty];
        this.dirty.clear();
        for (const id of ids) {
          const task = this.tasks.get(id);
          if (!task || task.removed) continue;
          const update = await refreshIndexedTask(task);
          if (update.parts.size > 0) {
            changed.set(task, update.parts);
            entries.push(...update.entries);
          }
          this.follow(task);
        }
      } catch {
        // A file vanished mid-read or similar: what was gathered is still committed; the next change or
        // poll looks again.
      }
      if (changed.size > 0) this.commit(changed, entries);
    }
  }

  private async scanStore(changed: Map<IndexedTask, Set<TaskPart>>, entries: NewEntry[]): Promise<void> {
    const stamp = await stampOf(this.tasksDir);
    if (stamp === this.storeStamp && this.pending.size === 0) return;
    this.storeStamp = stamp;
    const ids = await listTaskIds(this.root);
    const present = new Set(ids);
    for (const task of this.tasks.values()) {
      if (!present.has(task.id) && !task.removed) {
        task.removed = true;
        this.sorted = null;
        this.unfollow(task.id);
        changed.set(task, new Set(ALL_PARTS));
      }
    }
    const fresh = ids.filter((id) => {
      const known = this.tasks.get(id);
      return !known || known.removed;
    });
    this.pending.clear();
    for (const id of fresh) {
      const loaded = await loadIndexedTask(this.root, id);
      if (!loaded) {
        this.pending.add(id);
        continue;
      }
      this.add(loaded.task);
      changed.set(loaded.task, new Set(ALL_PARTS));
      entries.push(...loaded.entries);
      this.follow(loaded.task);
    }
  }

  private commit(changed: Map<IndexedTask, Set<TaskPart>>, entries: NewEntry[]): void {
    this.revision += 1;
    for (const [task, parts] of changed) {
      task.revision = this.revision;
      if (parts.has("state")) task.stateRevision = this.revision;
      if (parts.has("questions")) task.questionsRevision = this.revision;
    }
    const added = this.timeline.append(entries);
    const change: IndexChange = { revision: this.revision, tasks: [...changed.keys()], entries: added };
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch {
        // A listener's failure is its own (a closed stream); the index goes on.
      }
    }
  }

  /**
   * Watch a running task's directory; stop once it finished — and its `finished` event, which the engine
   * appends just after the final state, was seen (or a while passed). Finish it if its conductor is
   * proven gone.
   */
  private follow(task: IndexedTask): void {
    if (this.closed || this.options.watch === false) return;
    if (task.removed || (task.state.phase === "finished" && isSettled(task))) {
      this.unfollow(task.id);
      return;
    }
    if (!this.watchers.has(task.id)) {
      this.watchers.set(
        task.id,
        watchPath(task.dir, () => this.schedule(task.id), { pollMs: 1000, ignore: RAW_OUTPUT_FILES }),
      );
    }
    if (needsConductor(task.state) && !this.finishing.has(task.id)) {
      this.finishing.add(task.id);
      recoverTask({ id: task.id, dir: task.dir, paths: task.paths, state: task.state }, "serve")
        .catch(() => undefined)
        .finally(() => {
          this.finishing.delete(task.id);
          this.schedule(task.id);
        });
    }
  }

  private unfollow(id: string): void {
    this.watchers.get(id)?.();
    this.watchers.delete(id);
  }

  /**
   * Finished tasks change rarely (apply, gc, by any process): compare their stamps now and then. Also list
   * the store again, whatever its stamp says.
   */
  private async sweep(): Promise<void> {
    if (this.sweeping || this.closed) return;
    this.sweeping = true;
    // The store's stamp can miss a task created in the same clock tick as another: list it anyway.
    this.storeStamp = "";
    this.requestScan();
    try {
      const finished = [...this.tasks.values()].filter(
        (task) => !task.removed && !this.watchers.has(task.id),
      );
      await mapLimit(finished, 8, async (task) => {
        const [state, events] = await Promise.all([stampOf(task.record), sizeOrZero(task.paths.events)]);
        if (state !== task.stamps.state || events !== task.stamps.events) this.schedule(task.id);
      });
    } catch {
      // next sweep
    } finally {
      this.sweeping = false;
    }
  }
}

const ALL_PARTS: TaskPart[] = ["state", "events", "questions"];
/** How long a finished task is still watched when its `finished` event has not come. */
const SETTLE_MS = 10_000;

function isSettled(task: IndexedTask): boolean {
  if (task.lastEventType === "finished") return true;
  const finishedAt = Date.parse(task.state.finished_at ?? task.state.updated_at);
  return Number.isNaN(finishedAt) || Date.now() - finishedAt > SETTLE_MS;
}

async function sizeOrZero(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch {
    return 0;
  }
}
