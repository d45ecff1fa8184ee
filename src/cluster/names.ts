import { UsageError } from "../support/errors.js";
import { gitOut } from "../workspace/git.js";

/**
 * Every name caesar uses on a NATS server, in one place (docs/cluster.md lists them). Nothing here is a
 * protocol of caesar's own: JetStream streams, consumers and KV buckets, and JSON messages on subjects.
 */

/** The work queue: one message per task, `caesar.tasks.<queue>.<agent>`, removed when a worker acks it. */
export const TASKS_STREAM = "CAESAR_TASKS";
/** What workers publish about the tasks they run, `caesar.log.<task>.<kind>` (kept 7 days). */
export const LOG_STREAM = "CAESAR_LOG";
/** Who holds each task (the fencing token is the entry's revision), and its final result. */
export const CLAIMS_BUCKET = "caesar-claims";
/** Cancels and answers for tasks, `<task>.cancel`, `<task>.answer.<question>`. */
export const CONTROL_BUCKET = "caesar-control";
/** Each worker's record (agents, capacity, load), refreshed every few seconds. */
export const WORKERS_BUCKET = "caesar-workers";
/** Queue messages a worker dropped or refused (undecodable, wrong subject, refused by its policy), key = stream seq. */
export const DROPPED_BUCKET = "caesar-dropped";
/** The delegation trees' budget ledgers, `<queue>.<tree>`. */
export const BUDGETS_BUCKET = "caesar-budgets";
/** The key of `caesar-budgets` written to read the server's time (no dot: never a `<queue>.<tree>`). */
export const CLOCK_KEY = "clock";

export const LOG_KINDS = ["event", "raw", "state", "question"] as const;
export type LogKind = (typeof LOG_KINDS)[number];

/** Headers of the messages on the log: which attempt (a task re-run after a worker was lost counts up). */
export const HEADER_ATTEMPT = "Caesar-Attempt";
export const HEADER_WORKER = "Caesar-Worker";
/** A per-attempt counter, so a message published twice (a retry after a server restart) is applied once. */
export const HEADER_COUNTER = "Caesar-N";

export function taskSubject(queue: string, agent: string): string {
  return `caesar.tasks.${queue}.${agent}`;
}

export function queueSubjects(queue: string): string {
  return `caesar.tasks.${queue}.>`;
}

export function logSubject(taskId: string, kind: LogKind): string {
  return `caesar.log.${taskId}.${kind}`;
}

export function logFilter(taskId: string): string {
  return `caesar.log.${taskId}.>`;
}

/** The durable consumer every worker of `queue` shares for `agent` (one per subject: a work queue's rule). */
export function consumerName(queue: string, agent: string): string {
  return `agent_${queue}_${agent}`.replace(/[^A-Za-z0-9_-]/g, "_");
}

export function cancelKey(taskId: string): string {
  return `${taskId}.cancel`;
}

export function answerKey(taskId: string, questionId: string): string {
  return `${taskId}.answer.${questionId}`;
}

export function budgetKey(queue: string, tree: string): string {
  return `${queue}.${tree}`;
}

/** The ref a task's starting point is pushed under, for its worker to fetch. */
export function startRefName(taskId: string): string {
  return `refs/caesar/start/${taskId}`;
}

/**
 * The queue of a repository: every clone of it, on every machine, derives the same name from its first
 * commit — so workers of one repository never take another's tasks, with nothing to configure.
 * `[cluster] queue` overrides it (histories with several roots, or pools split on purpose).
 */
export async function queueNameOf(top: string, commit: string, override: string | null): Promise<string> {
  if (override) return override;
  const roots = (await gitOut(top, ["rev-list", "--max-parents=0", commit]))
    .split("\n")
    .filter(Boolean)
    .sort();
  if (roots.length === 0) {
    throw new UsageError("queue_unknown", `Cannot name the cluster's queue: ${commit} has no root commit.`, {
      detail: "Set [cluster] queue to a name shared by the submitters and workers of this repository.",
    });
  }
  return `r${roots[0]!.slice(0, 12)}`;
}

/** A NATS-safe token naming this worker (`<host>-<pid>` unless given). */
export function workerIdOf(host: string, pid: number, given?: string): string {
  const raw = given ?? `${host}-${pid}`;
  return raw.replace(/[^A-Za-z0-9_-]/g, "-").slice(0, 64) || `worker-${pid}`;
}
