import { invalidArgumentError } from "./errors.js";
import { type ChatRootOrigin, type ChatRootSource, resolveChatRoot } from "./root.js";

/**
 * After this long unchanged, a `_seq.lock` whose holder caesar cannot read or check (the reference's) is
 * taken over; a recorded holder is judged by its pid (support/lock.ts).
 */
export const DEFAULT_LOCK_STALE_MS = 10_000;

/** Everything a chat operation needs to know besides its own arguments. */
export interface ChatContext {
  /** The folder holding the channels. */
  root: string;
  rootOrigin: ChatRootOrigin;
  /** The sequence lock's stale period, in ms (for a lock without a holder caesar can check). */
  lockStaleMs: number;
  /**
   * How long a message file that is not whole yet (empty, cut short) may stay so before readers give
   * up on it: until then they hold their cursor below it. The lock's stale timeout by default, since
   * its writer holds the lock while it writes.
   */
  settleMs: number;
  /** `wait` sleep-polls instead of watching the folder. */
  forcePoll: boolean;
  now: () => Date;
}

export interface ChatContextOptions extends ChatRootSource {
  lockStaleMs?: number;
  settleMs?: number;
  forcePoll?: boolean;
  now?: () => Date;
}

/**
 * The context from explicit options, then the environment: `AGENT_CHAT_ROOT` (the spec's),
 * `CAESAR_CHAT_LOCK_STALE_MS` and `CAESAR_CHAT_POLL=1` (caesar's own knobs).
 */
export function makeChatContext(options: ChatContextOptions = {}): ChatContext {
  const env = options.env ?? process.env;
  const root = resolveChatRoot({ ...options, env });
  const lockStaleMs = options.lockStaleMs ?? parseStaleMs(env.CAESAR_CHAT_LOCK_STALE_MS);
  return {
    root: root.dir,
    rootOrigin: root.origin,
    lockStaleMs,
    settleMs: options.settleMs ?? lockStaleMs,
    forcePoll: options.forcePoll ?? isTruthy(env.CAESAR_CHAT_POLL),
    now: options.now ?? (() => new Date()),
  };
}

function parseStaleMs(raw: string | undefined): number {
  if (raw === undefined || raw === "") return DEFAULT_LOCK_STALE_MS;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    throw invalidArgumentError(
      `CAESAR_CHAT_LOCK_STALE_MS=${raw} is not a positive number of milliseconds.`,
      `Unset it to use the default (${DEFAULT_LOCK_STALE_MS} ms), or set a positive integer.`,
    );
  }
  return value;
}

function isTruthy(raw: string | undefined): boolean {
  return raw !== undefined && raw !== "" && raw !== "0" && raw.toLowerCase() !== "false";
}
