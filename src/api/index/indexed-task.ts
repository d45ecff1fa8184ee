import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { readEventSpans } from "../../engine/follow/event-spans.js";
import { listQuestions, type QuestionWithAnswer } from "../../engine/questions/questions.js";
import { controlOfTaskDir } from "../../engine/store/control.js";
import { type TaskState, TaskStateSchema } from "../../engine/store/state.js";
import { readTaskTextOrNothing } from "../../engine/store/task-files.js";
import { taskDirOf } from "../../engine/store/task-store.js";
import { type TaskPaths, taskPaths } from "../../protocol/task-dir.js";
import { errnoOf } from "../../support/errors.js";
import { SpanList } from "./span-list.js";
import { type NewEntry, USER_ACTOR } from "./timeline.js";

/**
 * What the index knows of one task directory: its state, where each event's line is in events.jsonl, its
 * questions — and the stamps that tell, with a few stat() calls, whether any of it changed since.
 */
export interface IndexedTask {
  id: string;
  dir: string;
  paths: TaskPaths;
  /**
   * The state file that is read: caesar's record in its control directory — never the mirror in the task
   * directory, which the agent can rewrite (a forged report, a worktree path for git to run in). A task
   * without a record (`verified` false) is shown from its mirror, and nothing is computed from it.
   */
  record: string;
  verified: boolean;
  state: TaskState;
  /** Byte ranges of the valid events, by ordinal - 1. */
  spans: SpanList;
  /** Timeline positions of this task's entries, ascending. */
  positions: number[];
  questions: QuestionWithAnswer[];
  /** The index revision at which this task last changed (anything). */
  revision: number;
  /** …at which its state.json last changed (what cancel and apply act on). */
  stateRevision: number;
  /** …at which its questions or answers last changed (what an answer acts on). */
  questionsRevision: number;
  /** Its directory disappeared from the store. */
  removed: boolean;
  /** What was last read: state.json's stat identity and content digest, events.jsonl's offset, questions. */
  stamps: { state: string; stateDigest: string; events: number; questions: string };
  /** The type of its last event (the engine appends `finished` just after writing the final state). */
  lastEventType: string | null;
  seen: { applyAt: string | null; cancelAt: string | null };
}

export type TaskPart = "state" | "events" | "questions";

export interface TaskUpdate {
  /** What changed (empty: nothing). */
  parts: Set<TaskPart>;
  entries: NewEntry[];
}

/** Read a task directory from scratch; `undefined` while it has no readable state.json yet. */
export async function loadIndexedTask(
  root: string,
  id: string,
): Promise<{ task: IndexedTask; entries: NewEntry[] } | undefined> {
  const dir = taskDirOf(root, id);
  const paths = taskPaths(dir);
  const control = controlOfTaskDir(dir);
  const verified = control !== undefined && existsSync(control.state);
  const record = verified ? control.state : paths.state;
  const stateStamp = await stampOf(record);
  if (stateStamp === "-") return undefined;
  const read = await readStateFile(record);
  if (!read) return undefined;
  const { state, digest } = read;
  const task: IndexedTask = {
    id,
    dir,
    paths,
    record,
    verified,
    state,
    spans: new SpanList(),
    positions: [],
    questions: [],
    revision: 0,
    stateRevision: 0,
    questionsRevision: 0,
    removed: false,
    stamps: { state: stateStamp, stateDigest: digest, events: 0, questions: "" },
    lastEventType: null,
    seen: { applyAt: null, cancelAt: null },
  };
  const entries = [...userActions(task), ...(await readNewEvents(task))];
  await refreshQuestions(task);
  return { task, entries };
}

/** Bring an indexed task up to date with its files; says whether anything changed and what entries are new. */
export async function refreshIndexedTask(task: IndexedTask): Promise<TaskUpdate> {
  const parts = new Set<TaskPart>();
  const entries: NewEntry[] = [];
  const stateStamp = await stampOf(task.record);
  // A running task's state.json is read every time (it is small, and such tasks are few): a stat() can
  // miss a rewrite — a reused inode, in the same clock tick, of the same size. A finished task's is read
  // when its stat() changed. The content digest decides whether it really changed. A missing or invalid
  // file (a directory going away, or an odd state: writes are atomic) keeps what we had.
  if (stateStamp !== "-" && (task.state.phase !== "finished" || stateStamp !== task.stamps.state)) {
    const read = await readStateFile(task.record);
    if (read) {
      task.stamps.state = stateStamp;
      if (read.digest !== task.stamps.stateDigest) {
        task.state = read.state;
        task.stamps.stateDigest = read.digest;
        parts.add("state");
        entries.push(...userActions(task));
      }
    }
  }
  const events = await readNewEvents(task);
  if (events.length > 0) parts.add("events");
  entries.push(...events);
  if (await refreshQuestions(task)) parts.add("questions");
  return { parts, entries };
}

async function readStateFile(path: string): Promise<{ state: TaskState; digest: string } | undefined> {
  const text = await readTaskTextOrNothing(path);
  if (text === undefined) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = TaskStateSchema.safeParse(raw);
  if (!parsed.success) return undefined;
  return { state: parsed.data, digest: createHash("sha1").update(text).digest("base64") };
}

async function readNewEvents(task: IndexedTask): Promise<NewEntry[]> {
  const size = await sizeOf(task.paths.events);
  if (size === task.stamps.events) return [];
  if (size < task.stamps.events) {
    // events.jsonl is append-only; a shorter file was rewritten by someone. Start over on it: the earlier
    // entries stay in the timeline (they were observed) but their lines are gone (read back as null), and
    // new ordinals continue after them.
    task.spans.forget();
    task.stamps.events = 0;
  }
  const read = await readEventSpans(task.paths.events, task.stamps.events);
  task.stamps.events = read.offset;
  if (read.spans.length > 0) task.lastEventType = read.spans.at(-1)!.event.type;
  return read.spans.map((span) => {
    task.spans.push(span.start, span.end);
    // Only what filtering and ordering need is kept; the event is read back from its range when asked for.
    return {
      task,
      kind: "event" as const,
      ordinal: task.spans.length,
      type: span.event.type,
      at: null,
      actor: span.event.type === "answer" ? USER_ACTOR : task.state.agent,
      data: null,
      time: timeOf(span.event.at),
    };
  });
}

/** Applies and cancellation requests are recorded in state.json, not as events: new ones become entries. */
function userActions(task: IndexedTask): NewEntry[] {
  const out: NewEntry[] = [];
  const { applied, cancel_requested: cancel } = task.state;
  if (cancel && cancel.at !== task.seen.cancelAt) {
    task.seen.cancelAt = cancel.at;
    out.push({
      task,
      kind: "cancel",
      ordinal: 0,
      type: "cancel",
      at: cancel.at,
      actor: USER_ACTOR,
      data: { by: cancel.by },
      time: timeOf(cancel.at),
    });
  }
  if (applied && applied.at !== task.seen.applyAt) {
    task.seen.applyAt = applied.at;
    out.push({
      task,
      kind: "apply",
      ordinal: 0,
      type: "apply",
      at: applied.at,
      actor: USER_ACTOR,
      data: { by: applied.by, head: applied.head, files: applied.files },
      time: timeOf(applied.at),
    });
  }
  return out;
}

async function refreshQuestions(task: IndexedTask): Promise<boolean> {
  const stamp = `${await listingStamp(task.paths.questions)}|${await listingStamp(task.paths.answers)}`;
  if (stamp === task.stamps.questions) return false;
  task.stamps.questions = stamp;
  try {
    task.questions = await listQuestions(task.dir);
  } catch {
    task.questions = [];
  }
  return true;
}

/**
 * Identity of a small directory's content: its `.json` entries and their inodes. Not its mtime: file
 * timestamps come from a coarse clock, so a temp file and its rename in the same tick leave the directory
 * with the same mtime (and size) — and the question would go unseen.
 */
async function listingStamp(dir: string): Promise<string> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((name) => name.endsWith(".json")).sort();
  } catch (error) {
    if (errnoOf(error) === "ENOENT" || errnoOf(error) === "ENOTDIR") return "-";
    throw error;
  }
  const parts = await Promise.all(names.map(async (name) => `${name}:${await stampOf(`${dir}/${name}`)}`));
  return parts.join(",");
}

/** Identity of a file's current version: a rename (atomic write) gives a new inode, an edit a new mtime. */
export async function stampOf(path: string): Promise<string> {
  try {
    const info = await stat(path, { bigint: true });
    return `${info.ino}:${info.mtimeNs}:${info.size}:${info.nlink}`;
  } catch (error) {
    if (errnoOf(error) === "ENOENT" || errnoOf(error) === "ENOTDIR") return "-";
    throw error;
  }
}

async function sizeOf(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return 0;
    throw error;
  }
}

/** A timestamp as milliseconds, for ordering (0 when it is not a date: agents write what they like). */
export function timeOf(at: string): number {
  const time = Date.parse(at);
  return Number.isNaN(time) ? 0 : time;
}
