import { statSync } from "node:fs";
import { join } from "node:path";
import { DeliverPolicy } from "@nats-io/jetstream";
import type { RemoteState } from "../../engine/store/state.js";
import { readTaskTextSync } from "../../engine/store/task-files.js";
import { taskPaths } from "../../protocol/task-dir.js";
import { writeFileAtomic } from "../../support/atomic-file.js";

/**
 * How far the relay has mirrored a task (`remote.json` in its directory): the last log message applied,
 * the attempt it belongs to, and what that wrote here. After a relay restart it resumes there; what the
 * files hold beyond it (applied just before a crash) is not applied twice.
 */
export interface MirrorProgress {
  /** Stream sequence of the last log message handled (0: none). */
  log_seq: number;
  attempt: number;
  /** The last per-attempt counter applied (messages of the attempt at or below it are duplicates). */
  counter: number;
  /** Lines of events.jsonl and bytes of raw.log written by the relay. */
  lines: number;
  raw_bytes: number;
}

const FILE = "remote.json";

export function loadProgress(dir: string): MirrorProgress {
  try {
    const raw = JSON.parse(readTaskTextSync(join(dir, FILE)) ?? "{}") as Partial<MirrorProgress>;
    return {
      log_seq: raw.log_seq ?? 0,
      attempt: raw.attempt ?? 0,
      counter: raw.counter ?? 0,
      lines: raw.lines ?? 0,
      raw_bytes: raw.raw_bytes ?? 0,
    };
  } catch {
    return { log_seq: 0, attempt: 0, counter: 0, lines: 0, raw_bytes: 0 };
  }
}

/**
 * Written after every message, by rename (atomic) but without a flush to disk: losing the last few after
 * a machine crash only re-reads them, and `alreadyWritten` keeps them from being applied twice.
 */
export async function saveProgress(dir: string, progress: MirrorProgress): Promise<void> {
  // A temp name of its own (random, created exclusively): never one an agent could have put a link at.
  await writeFileAtomic(join(dir, FILE), JSON.stringify(progress), { sync: false });
}

/** What the task's files hold beyond the saved progress: event lines and raw bytes not to write again. */
export function alreadyWritten(dir: string, progress: MirrorProgress): { lines: number; rawBytes: number } {
  const paths = taskPaths(dir);
  let lines = 0;
  try {
    const text = readTaskTextSync(paths.events, { maxBytes: Number.MAX_SAFE_INTEGER }) ?? "";
    for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) lines++;
  } catch {
    lines = 0;
  }
  let rawBytes = 0;
  try {
    rawBytes = statSync(paths.raw).size;
  } catch {
    rawBytes = 0;
  }
  return {
    lines: Math.max(0, lines - progress.lines),
    rawBytes: Math.max(0, rawBytes - progress.raw_bytes),
  };
}

/**
 * Where the relay's consumer of a task's log starts (filtered on the task's subjects): after the last
 * message applied; the first time, after the log's last sequence when the task was sent (`remote.
 * log_seq_before`); for a task sent before caesar recorded it, at the start of its subjects. Sequences
 * only: a start time would compare the submitter's clock with the server's timestamps.
 */
export function logStartOf(
  progress: Pick<MirrorProgress, "log_seq">,
  remote: Pick<RemoteState, "log_seq_before">,
): { deliver_policy: DeliverPolicy; opt_start_seq?: number } {
  const after = progress.log_seq > 0 ? progress.log_seq : remote.log_seq_before;
  return after === null
    ? { deliver_policy: DeliverPolicy.All }
    : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: after + 1 };
}
