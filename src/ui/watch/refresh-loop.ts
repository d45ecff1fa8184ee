import { existsSync } from "node:fs";
import { RAW_OUTPUT_FILES, watchPath } from "../../engine/store/change-watch.js";
import type { TaskEvents, WatchSource } from "./source.js";

/** Delay that coalesces a burst of file notifications into one refresh. */
const COALESCE_MS = 25;
/**
 * Polling beside the file watch of each task directory. The watch of the task store already polls
 * (every second, or faster without fs.watch) and every refresh reads every task, so these are a backstop.
 */
const TASK_DIR_POLL_MS = 5000;

/**
 * Refreshes a watch source whenever a watched directory changes (fs.watch, with the polling fallback
 * of `watchPath`), never two refreshes at once, until stopped.
 */
export class RefreshLoop {
  private readonly watchers = new Map<string, () => void>();
  private timer: NodeJS.Timeout | undefined;
  private keepAlive: NodeJS.Timeout | undefined;
  private running = false;
  private again = false;
  private stopped = false;
  private finish: (error?: unknown) => void = () => {};
  /** Settles when the loop stops; rejects when a refresh failed. */
  readonly done: Promise<void>;

  constructor(
    private readonly source: WatchSource,
    /** Called after each refresh with what changed; return true to stop. */
    private readonly onRefresh: (changes: TaskEvents[]) => boolean | undefined,
  ) {
    this.done = new Promise((resolve, reject) => {
      this.finish = (error) => (error === undefined ? resolve() : reject(error));
    });
  }

  /** Refresh now, then on every change until `stop()` (or `onRefresh` returns true). */
  start(): Promise<void> {
    // File watches and their polling do not hold the process open (they are unref'd): this does.
    this.keepAlive = setInterval(() => {}, 2 ** 30);
    this.schedule(0);
    return this.done;
  }

  schedule(delay = COALESCE_MS): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.run();
    }, delay);
  }

  stop(error?: unknown): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.keepAlive) clearInterval(this.keepAlive);
    for (const unwatch of this.watchers.values()) unwatch();
    this.watchers.clear();
    this.finish(error);
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      do {
        this.again = false;
        const changes = await this.source.refresh();
        if (this.stopped) return;
        if (this.onRefresh(changes)) {
          this.stop();
          return;
        }
        this.syncWatchers();
      } while (this.again && !this.stopped);
    } catch (error) {
      this.stop(error);
    } finally {
      this.running = false;
    }
  }

  private syncWatchers(): void {
    const wanted = new Set(this.source.watchedPaths());
    for (const [path, unwatch] of this.watchers) {
      if (!wanted.has(path)) {
        unwatch();
        this.watchers.delete(path);
      }
    }
    for (const path of wanted) {
      if (this.watchers.has(path)) continue;
      const isStore = path === this.source.tasksDir;
      // A directory that does not exist yet is found by the next refresh; only the store is polled for.
      if (!isStore && !existsSync(path)) continue;
      this.watchers.set(
        path,
        watchPath(
          path,
          () => this.schedule(),
          isStore ? {} : { pollMs: TASK_DIR_POLL_MS, ignore: RAW_OUTPUT_FILES },
        ),
      );
    }
  }
}
