import type { IndexedTask } from "./indexed-task.js";

/** What a timeline entry records: an event of a task's events.jsonl, or a user's action read from state.json. */
export type TimelineKind = "event" | "apply" | "cancel";

export interface TimelineEntry {
  /** 1-based, increasing in the order the index observed entries (at build: by timestamp). */
  position: number;
  task: IndexedTask;
  kind: TimelineKind;
  /** For events: the event's 1-based ordinal among the task's valid events. */
  ordinal: number;
  /** The event type, or `apply` / `cancel`. */
  type: string;
  /**
   * For user actions: when (from state.json). Events keep no timestamp here — a string parsed out of a line
   * can hold on to the whole line — their own `at` is read back with them.
   */
  at: string | null;
  /** The task's agent, or `user` for answers, applies and cancels. */
  actor: string;
  /** For user actions: what state.json recorded. */
  data: Record<string, unknown> | null;
}

/** An entry before it has a position, with its time (ms) for the ordering at build time. */
export type NewEntry = Omit<TimelineEntry, "position"> & { time: number };

export const USER_ACTOR = "user";

/**
 * All entries of all tasks, in observation order, with per-actor position lists, so a filtered page is a
 * binary search plus `limit` steps — never a scan of every task.
 */
export class Timeline {
  private readonly entries: TimelineEntry[] = [];
  private readonly byActor = new Map<string, number[]>();

  get size(): number {
    return this.entries.length;
  }

  /** The newest position (0 when empty). */
  get last(): number {
    return this.entries.length;
  }

  /** Append entries in the order given; returns them with their positions. */
  append(items: readonly NewEntry[]): TimelineEntry[] {
    const added: TimelineEntry[] = [];
    for (const item of items) {
      // Built field by field (not spread): one shape for every entry, and no `time` kept.
      const entry: TimelineEntry = {
        position: this.entries.length + 1,
        task: item.task,
        kind: item.kind,
        ordinal: item.ordinal,
        type: item.type,
        at: item.at,
        actor: item.actor,
        data: item.data,
      };
      this.entries.push(entry);
      item.task.positions.push(entry.position);
      let list = this.byActor.get(entry.actor);
      if (!list) {
        list = [];
        this.byActor.set(entry.actor, list);
      }
      list.push(entry.position);
      added.push(entry);
    }
    return added;
  }

  at(position: number): TimelineEntry | undefined {
    return this.entries[position - 1];
  }

  actors(): string[] {
    return [...this.byActor.keys()].sort();
  }

  /**
   * Newest first: up to `limit` entries older than `before` matching the filters, and whether more exist.
   * Entries of tasks that were removed from the store are skipped.
   */
  page(options: { actor?: string; task?: IndexedTask; before?: number; limit: number }): {
    entries: TimelineEntry[];
    more: boolean;
  } {
    const candidates = this.candidates(options);
    const before = options.before ?? Number.POSITIVE_INFINITY;
    const out: TimelineEntry[] = [];
    let more = false;
    // Walk back from the last candidate whose position is < before (positions are 1-based and sorted).
    let index =
      candidates === null
        ? Math.min(this.entries.length, before - 1) - 1
        : countBelow(candidates, before) - 1;
    for (; index >= 0; index--) {
      const entry = this.entries[candidates === null ? index : candidates[index]! - 1]!;
      if (entry.task.removed) continue;
      if (options.task && entry.task !== options.task) continue;
      if (options.actor !== undefined && entry.actor !== options.actor) continue;
      if (out.length === options.limit) {
        more = true;
        break;
      }
      out.push(entry);
    }
    return { entries: out, more };
  }

  private candidates(options: { actor?: string; task?: IndexedTask }): number[] | null {
    const byActor = options.actor === undefined ? undefined : (this.byActor.get(options.actor) ?? []);
    const byTask = options.task?.positions;
    if (byActor && byTask) return byActor.length < byTask.length ? byActor : byTask;
    return byActor ?? byTask ?? null;
  }
}

/** How many values of a sorted list are < bound. */
function countBelow(list: readonly number[], bound: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]! < bound) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
