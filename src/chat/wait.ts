import { type FSWatcher, watch } from "node:fs";
import { dirname } from "node:path";
import { errnoOf } from "../support/errors.js";
import { openChannel } from "./channel.js";
import type { ChatContext } from "./context.js";
import { readCursor } from "./cursor.js";
import { channelNotFoundError } from "./errors.js";
import { isRelevantTo } from "./message.js";
import { validateName } from "./names.js";
import { type ReadResult, readMessages } from "./read.js";
import { type ChannelScan, loadMessage, scanChannel } from "./scan.js";

export const DEFAULT_WAIT_TIMEOUT_MS = 300_000;
export const DEFAULT_POLL_INTERVAL_MS = 2_000;
// No caller can make the rescan a busy loop.
const MIN_INTERVAL_MS = 20;
// Events arriving together (temp file, link, unlink) cost one scan.
const EVENT_COALESCE_MS = 5;

export type WaitMode = "watch" | "poll";

export interface WaitOptions {
  as: string;
  timeoutMs?: number;
  /** Sleep between scans when polling; in watch mode, the safety-net rescan period. */
  intervalMs?: number;
  /** Sleep-poll instead of watching the folder (default: the context's `forcePoll`). */
  poll?: boolean;
  signal?: AbortSignal;
  /** Called at each polling interval with the time waited so far (for progress reports). */
  onTick?: (waitedMs: number) => void;
}

export interface WaitTimeout {
  timed_out: true;
  channel: string;
  as: string;
  cursor: number;
  waited_ms: number;
  mode: WaitMode;
}

export type WaitResult = (ReadResult & { timed_out: false; waited_ms: number; mode: WaitMode }) | WaitTimeout;

/**
 * Block until a message for `as` (broadcast or addressed to it, not its own) with a sequence above
 * its cursor exists, then read it (delivering it and advancing the cursor), or time out. Sleeps in
 * the process meanwhile: an OS file watch wakes it at once, and a periodic rescan (the only mechanism
 * with `poll`, or where watching fails, e.g. without inotify) makes sure nothing is missed.
 */
export async function waitForMessages(
  ctx: ChatContext,
  channelName: string,
  options: WaitOptions,
): Promise<WaitResult> {
  const agent = validateName(options.as, "agent");
  const channel = await openChannel(ctx, channelName);
  const started = Date.now();
  const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
  let mode: WaitMode = (options.poll ?? ctx.forcePoll) ? "poll" : "watch";
  for (;;) {
    const cursor = (await readCursor(channel.dir, agent)).seq;
    const remaining = timeoutMs - (Date.now() - started);
    const outcome = await sleepUntilRelevant(ctx, channel.dir, channel.name, agent, cursor, {
      ...options,
      timeoutMs: Math.max(0, remaining),
      intervalMs: Math.max(MIN_INTERVAL_MS, options.intervalMs ?? DEFAULT_POLL_INTERVAL_MS),
      mode,
      started,
    });
    mode = outcome.mode;
    const waited = Date.now() - started;
    if (!outcome.found)
      return { timed_out: true, channel: channel.name, as: agent, cursor, waited_ms: waited, mode };
    const read = await readMessages(ctx, channel.name, { as: agent });
    // Another reader acting as the same agent may have taken them first: then keep waiting.
    if (read.messages.length > 0) return { ...read, timed_out: false, waited_ms: waited, mode };
  }
}

interface SleepOptions extends WaitOptions {
  timeoutMs: number;
  intervalMs: number;
  mode: WaitMode;
  started: number;
}

function sleepUntilRelevant(
  ctx: ChatContext,
  dir: string,
  channel: string,
  agent: string,
  cursor: number,
  options: SleepOptions,
): Promise<{ found: boolean; mode: WaitMode }> {
  return new Promise((resolve, reject) => {
    // What each file said, so that a rescan parses only files it has not seen.
    const verdicts = new Map<string, boolean>();
    // A file still being written holds the wait like it holds a read: look again once it may have settled.
    let settling: NodeJS.Timeout | undefined;
    let mode = options.mode;
    let watcher: FSWatcher | undefined;
    let settled = false;
    let scanning = false;
    let again = false;
    let expired = false;
    let coalescing: NodeJS.Timeout | undefined;

    const finish = (error: unknown, found = false) => {
      if (settled) return;
      settled = true;
      watcher?.close();
      clearInterval(interval);
      clearTimeout(deadline);
      clearTimeout(coalescing);
      clearTimeout(settling);
      options.signal?.removeEventListener("abort", onAbort);
      if (error !== undefined) reject(error);
      else resolve({ found, mode });
    };
    // The same verdict a read would reach: a relevant message before any file still being written.
    const check = async (): Promise<boolean> => {
      let scan: ChannelScan;
      try {
        scan = scanChannel(dir);
      } catch (error) {
        throw errnoOf(error) === "ENOENT" ? channelNotFoundError(channel, dirname(dir)) : error;
      }
      const clock = { now: Date.now(), settleMs: ctx.settleMs };
      for (const entry of scan.entries) {
        if (entry.seq <= cursor) continue;
        let relevant = verdicts.get(entry.file);
        if (relevant === undefined) {
          const loaded = loadMessage(dir, entry, channel, clock);
          if (loaded.state === "pending") {
            clearTimeout(settling);
            settling = setTimeout(rescan, Math.max(0, loaded.settleAt - clock.now) + 1);
            return false;
          }
          relevant = loaded.state === "ok" && isRelevantTo(loaded.message, agent);
          verdicts.set(entry.file, relevant);
        }
        if (relevant) return true;
      }
      return false;
    };
    const rescan = () => {
      if (settled) return;
      if (scanning) {
        again = true;
        return;
      }
      scanning = true;
      check().then(
        (found) => {
          scanning = false;
          if (found) finish(undefined, true);
          else if (expired) finish(undefined, false);
          else if (again) {
            again = false;
            rescan();
          }
        },
        (error) => finish(error),
      );
    };
    const onEvent = () => {
      coalescing ??= setTimeout(() => {
        coalescing = undefined;
        rescan();
      }, EVENT_COALESCE_MS);
    };
    const onAbort = () => finish(options.signal?.reason ?? new Error("aborted"));

    if (mode === "watch") {
      try {
        watcher = watch(dir, { persistent: true }, onEvent);
        watcher.on("error", () => {
          // The watch broke (folder removed, watch limit): polling carries on alone.
          watcher?.close();
          watcher = undefined;
          mode = "poll";
        });
      } catch {
        // No file watch here (no inotify, watch limit reached): sleep-polling is the portable baseline.
        mode = "poll";
      }
    }
    const interval = setInterval(() => {
      options.onTick?.(Date.now() - options.started);
      rescan();
    }, options.intervalMs);
    // At the deadline, one last scan decides.
    const deadline = setTimeout(() => {
      expired = true;
      rescan();
    }, options.timeoutMs);
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    rescan();
  });
}
