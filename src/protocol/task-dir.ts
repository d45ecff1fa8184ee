import { join } from "node:path";
import { assertTaskId } from "./ids.js";
import { OACP_VERSION } from "./versions.js";

/** The files of a task directory: the ones OACP names, and the ones the orchestrator keeps beside them. */
export const TASK_FILES = {
  /** The task (orchestrator). */
  task: "task.json",
  /** The agent's report (agent). */
  report: "report.json",
  /** The progress stream, one JSON line per event (agent or adapter). */
  events: "events.jsonl",
  /** The process's raw output, for diagnosis (orchestrator). */
  raw: "raw.log",
  /** Questions asked through the return channel (agent). */
  questions: "questions",
  /** Answers to those questions (orchestrator). */
  answers: "answers",
  /** Lifecycle, pids, outcome and the normalized report (orchestrator; beyond OACP). */
  state: "state.json",
} as const;

export interface TaskPaths {
  dir: string;
  task: string;
  report: string;
  events: string;
  raw: string;
  questions: string;
  answers: string;
  state: string;
}

export function taskPaths(dir: string): TaskPaths {
  return {
    dir,
    task: join(dir, TASK_FILES.task),
    report: join(dir, TASK_FILES.report),
    events: join(dir, TASK_FILES.events),
    raw: join(dir, TASK_FILES.raw),
    questions: join(dir, TASK_FILES.questions),
    answers: join(dir, TASK_FILES.answers),
    state: join(dir, TASK_FILES.state),
  };
}

/** The directory of a task in a store, after validating the id (it becomes a path). */
export function taskDirIn(tasksRoot: string, id: string): string {
  return join(tasksRoot, assertTaskId(id));
}

/** The eight CAESAR_* variables an agent process receives. */
export const CAESAR_ENV_NAMES = [
  "CAESAR_TASK_DIR",
  "CAESAR_TASK_FILE",
  "CAESAR_REPORT_PATH",
  "CAESAR_EVENTS_PATH",
  "CAESAR_TASK_ID",
  "CAESAR_AGENT",
  "CAESAR_DEPTH",
  "CAESAR_PROTOCOL_VERSION",
] as const;

/**
 * The credentials caesar hands a task's agent beside the eight protocol variables (not part of OACP): a
 * nested request proves which task it comes from with them. Never written into the task directory.
 */
export const TASK_TOKEN_ENV = "CAESAR_TASK_TOKEN";

export type CaesarEnv = Record<(typeof CAESAR_ENV_NAMES)[number], string>;

export function makeCaesarEnv(input: {
  dir: string;
  taskId: string;
  agent: string;
  depth: number;
}): CaesarEnv {
  const paths = taskPaths(input.dir);
  return {
    CAESAR_TASK_DIR: paths.dir,
    CAESAR_TASK_FILE: paths.task,
    CAESAR_REPORT_PATH: paths.report,
    CAESAR_EVENTS_PATH: paths.events,
    CAESAR_TASK_ID: input.taskId,
    CAESAR_AGENT: input.agent,
    CAESAR_DEPTH: String(input.depth),
    CAESAR_PROTOCOL_VERSION: OACP_VERSION,
  };
}
