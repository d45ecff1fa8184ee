import type { CaesarEvent } from "../../protocol/event.js";
import type { TaskState } from "./state.js";
import { readState } from "./task-store.js";

/** What caesar recorded of its own last events, and where the task is: all it takes to tell them apart. */
export type EventOwnerRecord = Pick<TaskState, "phase" | "final_events">;

/**
 * Is this event caesar's own `finished` — the task's end? The OACP vocabulary lets an agent write a
 * `finished` line of its own into events.jsonl, and what it says may disagree with how the task ended.
 * caesar's is the one whose `seq` and `at` it recorded (`final_events`) before appending it; any other is
 * the agent's, whatever the line claims. A task ended before caesar kept that record is read as it was
 * then: once finished, its `finished` lines are caesar's unless they say they are the agent's.
 */
export function isTaskEnd(event: CaesarEvent, record: EventOwnerRecord): boolean {
  if (event.type !== "finished") return false;
  const final = record.final_events;
  if (final) return event.seq >= final.seq && event.at === final.at;
  return record.phase === "finished" && event.by !== "agent";
}

/**
 * What a reader has seen of a task's events so far: caesar's `finished` is the first line that matches its
 * record — an agent that copies that line (its `seq` and `at` included) after caesar wrote it appends a
 * second match, which is the agent's. A follower keeps one across its reads.
 */
export interface EventOwnerSeen {
  taskEnd: boolean;
}

function owner(
  event: CaesarEvent,
  record: EventOwnerRecord | undefined,
  seen: EventOwnerSeen,
): "caesar" | "agent" {
  if (seen.taskEnd || !record || !isTaskEnd(event, record)) return "agent";
  seen.taskEnd = true;
  return "caesar";
}

/**
 * Mark every `finished` event with who wrote it (`by`), from caesar's record: what every reader (the
 * command line, the MCP tools, the watch screen, the HTTP API) shows, so none takes an agent's own
 * `finished` for the task's end. Read the record after the events: caesar records its `final_events`
 * before it appends them, so a reader that read caesar's `finished` then finds the record that names it.
 */
export function markFinishedEvents(
  events: CaesarEvent[],
  record: EventOwnerRecord,
  seen: EventOwnerSeen = { taskEnd: false },
): CaesarEvent[] {
  return events.map((event) =>
    event.type === "finished" ? { ...event, by: owner(event, record, seen) } : event,
  );
}

/**
 * `markFinishedEvents` for event lines read back as JSON (the HTTP API's timeline and stream): when one
 * is a `finished`, caesar's record is read now — after the lines — to tell whose it is.
 */
export async function markFinishedLines(
  lines: unknown[],
  dir: string,
  seen: EventOwnerSeen = { taskEnd: false },
): Promise<unknown[]> {
  const isFinished = (line: unknown): line is CaesarEvent & { type: "finished" } =>
    typeof line === "object" && line !== null && (line as { type?: unknown }).type === "finished";
  if (!lines.some(isFinished)) return lines;
  const record = await readState(dir).catch(() => undefined);
  return lines.map((line) => {
    if (!isFinished(line)) return line;
    return { ...line, by: owner(line, record, seen) };
  });
}
