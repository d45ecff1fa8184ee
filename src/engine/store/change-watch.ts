import { type FSWatcher, watch } from "node:fs";
import { TASK_FILES } from "../../protocol/task-dir.js";

export interface WatchOptions {
  /** Polling interval of the fallback, also active beside the watcher in case events are missed (ms). */
  pollMs?: number;
  /** Never use fs.watch (filesystems without inotify, or tests of the fallback). */
  pollOnly?: boolean;
  /**
   * Names of files in the watched directory whose changes do not count (a task's raw.log, which an agent's
   * flood appends to a thousand times a second, for a reader of its events and state). The polling
   * fallback still calls at its interval.
   */
  ignore?: readonly string[];
  /**
   * For a directory: the names of its entries whose changes count (a follower of a task wants its state and
   * events, not every write to its logs or a temp file's creation). A change the platform does not name
   * counts; the polling fallback calls all the same.
   */
  only?: readonly string[];
}

/** A task directory's files a reader of its events and state need not wake for: the agent's raw output. */
export const RAW_OUTPUT_FILES: readonly string[] = [TASK_FILES.raw];

/**
 * Call `onChange` soon after anything in `path` (a file or a directory) changes: fs.watch when the
 * platform gives it, with a polling fallback that keeps working where it does not (network
 * filesystems, containers without inotify). `CAESAR_WATCH=poll` forces polling.
 */
export function watchPath(path: string, onChange: () => void, options: WatchOptions = {}): () => void {
  const pollOnly = options.pollOnly ?? process.env.CAESAR_WATCH === "poll";
  let watcher: FSWatcher | undefined;
  if (!pollOnly) {
    try {
      const { ignore, only } = options;
      watcher = watch(path, { persistent: false }, (_event, name) => {
        const entry = name?.toString();
        if (entry !== undefined && ignore?.includes(entry)) return;
        if (!only || entry === undefined || only.includes(entry)) onChange();
      });
      watcher.on("error", () => {
        watcher?.close();
        watcher = undefined;
      });
    } catch {
      watcher = undefined;
    }
  }
  const pollMs = options.pollMs ?? (watcher ? 1000 : 200);
  const timer = setInterval(onChange, pollMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    watcher?.close();
  };
}

/**
 * Watch `path` and wait for its changes one wait at a time, losing none: a change that comes while the
 * caller is busy between two waits (reading what changed) makes the next wait return at once.
 */
export class ChangeWatch {
  private changed = false;
  private wake: (() => void) | undefined;
  private readonly stop: () => void;

  constructor(path: string, options: WatchOptions = {}) {
    this.stop = watchPath(
      path,
      () => {
        this.changed = true;
        this.wake?.();
      },
      options,
    );
  }

  /** Resolve at the next change (at once if one came since the last wait), after `timeoutMs`, or on abort. */
  next(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.changed || signal?.aborted) {
      this.changed = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        this.wake = undefined;
        this.changed = false;
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.wake = done;
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  /** Count as a change now (something else than the file system says to look again). */
  poke(): void {
    this.changed = true;
    this.wake?.();
  }

  close(): void {
    this.stop();
    this.wake?.();
  }
}

/** Resolve when `path` changes or after `timeoutMs`, whichever comes first (or when aborted). */
export function waitForChange(
  path: string,
  timeoutMs: number,
  signal?: AbortSignal,
  options: WatchOptions = {},
): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    let stop = () => {};
    const done = () => {
      clearTimeout(timer);
      stop();
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    stop = watchPath(path, done, options);
    signal?.addEventListener("abort", done, { once: true });
  });
}
