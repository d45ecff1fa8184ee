import { type FSWatcher, watch } from "node:fs";

export interface WatchOptions {
  /** Polling interval of the fallback, also active beside the watcher in case events are missed (ms). */
  pollMs?: number;
  /** Never use fs.watch (filesystems without inotify, or tests of the fallback). */
  pollOnly?: boolean;
}

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
      watcher = watch(path, { persistent: false }, () => onChange());
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
