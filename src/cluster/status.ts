import type { KV } from "@nats-io/kv";
import { liveEntry } from "./cas.js";
import { isHeldBy, readClaim } from "./claims.js";
import type { Cluster } from "./connection.js";
import { readDropped } from "./dropped.js";
import {
  BUDGETS_BUCKET,
  CLAIMS_BUCKET,
  CLOCK_KEY,
  consumerName,
  DROPPED_BUCKET,
  queueSubjects,
  TASKS_STREAM,
  WORKERS_BUCKET,
} from "./names.js";
import { serverTimeOf } from "./server-clock.js";
import { isNotFound } from "./setup.js";
import { readTaskViews, type TaskView } from "./status-tasks.js";
import { type DroppedMessage, decode, type WorkerRecord, WorkerRecordSchema } from "./wire.js";

/** Registry periods without a refresh after which a worker counts as lost (as the workers judge it: holder.ts). */
const LOST_AFTER_PERIODS = 3;

/** What `cluster status` says of a worker: serving, draining, quarantined (by itself), or lost. */
export type WorkerCondition = "serving" | "draining" | "quarantined" | "lost";

export interface WorkerView extends WorkerRecord {
  /** Milliseconds since its last heartbeat, by the server's clock. */
  age_ms: number;
  /** No heartbeat for three periods: lost (its tasks go to others after the heartbeat timeout). */
  stale: boolean;
  condition: WorkerCondition;
}

export interface QueueDepth {
  agent: string;
  /** In the queue, no worker has taken them yet. */
  waiting: number;
  /** Taken by a worker, not finished. */
  running: number;
  /** Whether any worker ever served this agent (a consumer exists). */
  served: boolean;
}

export interface ClusterStatus {
  servers: string;
  server_version: string;
  queue: string;
  /** False on a server no caesar worker or submitter has used yet: no queue, no worker (nothing is created). */
  ready: boolean;
  workers: WorkerView[];
  queue_depth: QueueDepth[];
  tasks_per_worker: Record<string, string[]>;
  /** Tasks in flight and those finished in the last hour, each with its attempts across workers. */
  tasks: TaskView[];
  /** Queue messages workers dropped (undecodable, wrong subject, duplicate) or refused, newest first. */
  dropped: DroppedMessage[];
}

/**
 * `caesar cluster status`: workers (agents, capacity, load, last heartbeat, condition), queue depth,
 * tasks per worker. It only reads (but for the budgets bucket's `clock` key, written to read the
 * server's time): a server caesar never used is reported as such, not set up.
 */
export async function readClusterStatus(cluster: Cluster, queue: string): Promise<ClusterStatus> {
  const base = {
    servers: cluster.servers,
    server_version: cluster.nc.info?.version ?? "?",
    queue,
  };
  const registry = await openIfExists(cluster, WORKERS_BUCKET);
  const tasksStream = await streamExists(cluster, TASKS_STREAM);
  if (!registry && !tasksStream)
    return {
      ...base,
      ready: false,
      workers: [],
      queue_depth: [],
      tasks_per_worker: {},
      tasks: [],
      dropped: [],
    };
  const now = await serverNowOf(cluster);
  const workers = registry ? await readWorkers(cluster, registry, now) : [];
  const depth = tasksStream ? await readDepth(cluster, queue, workers) : [];
  const tasksPerWorker: Record<string, string[]> = {};
  for (const worker of workers) tasksPerWorker[worker.id] = worker.running;
  const claims = await openIfExists(cluster, CLAIMS_BUCKET);
  const tasks = claims ? await readTaskViews(claims, now) : [];
  const droppedBucket = await openIfExists(cluster, DROPPED_BUCKET);
  const dropped = droppedBucket ? await readDropped(droppedBucket) : [];
  return {
    ...base,
    ready: true,
    workers,
    queue_depth: depth,
    tasks_per_worker: tasksPerWorker,
    tasks,
    dropped,
  };
}

async function readWorkers(cluster: Cluster, registry: KV, now: number): Promise<WorkerView[]> {
  const claims = await openIfExists(cluster, CLAIMS_BUCKET);
  const keys: string[] = [];
  for await (const key of await registry.keys()) keys.push(key);
  const workers: WorkerView[] = [];
  for (const key of keys.sort()) {
    const entry = await liveEntry(registry, key);
    const record = entry && decode(WorkerRecordSchema, entry.value);
    if (!entry || !record) continue;
    // The server stamped the record when it stored it: one clock for every machine's records.
    const age = Math.max(0, now - entry.created.getTime());
    const lost = age > LOST_AFTER_PERIODS * record.heartbeat_ms;
    // A record lists what its worker held when it wrote it; the claims say who holds a task now.
    const running = claims ? await stillHeld(claims, record) : record.running;
    workers.push({
      ...record,
      running,
      age_ms: age,
      stale: lost,
      condition: lost
        ? "lost"
        : record.quarantined
          ? "quarantined"
          : record.draining
            ? "draining"
            : "serving",
    });
  }
  return workers;
}

/** The tasks of a record whose claim still names that worker (the same process) and is running. */
async function stillHeld(claims: KV, record: WorkerRecord): Promise<string[]> {
  const held: string[] = [];
  for (const id of record.running) {
    const current = await readClaim(claims, id).catch(() => undefined);
    const claim = current?.claim;
    if (isHeldBy(claim, record)) held.push(id);
  }
  return held;
}

async function readDepth(cluster: Cluster, queue: string, workers: WorkerView[]): Promise<QueueDepth[]> {
  const depth = new Map<string, QueueDepth>();
  const info = await cluster.jsm.streams.info(TASKS_STREAM, { subjects_filter: queueSubjects(queue) });
  for (const [subject, count] of Object.entries(info.state.subjects ?? {})) {
    const agent = subject.slice(queueSubjects(queue).length - 1);
    depth.set(agent, { agent, waiting: count, running: 0, served: false });
  }
  const agents = new Set([
    ...depth.keys(),
    ...workers.filter((w) => w.queue === queue).flatMap((w) => w.agents),
  ]);
  for (const agent of agents) {
    const row = depth.get(agent) ?? { agent, waiting: 0, running: 0, served: false };
    try {
      const consumer = await cluster.jsm.consumers.info(TASKS_STREAM, consumerName(queue, agent));
      // A work queue keeps a taken task until it is acked: the stream counts it, the consumer says it is taken.
      row.running = consumer.num_ack_pending;
      row.waiting = consumer.num_pending;
      row.served = true;
    } catch {
      row.served = false;
    }
    depth.set(agent, row);
  }
  return [...depth.values()].sort((a, b) => a.agent.localeCompare(b.agent));
}

/** The server's time now; this machine's when the budgets bucket cannot be written (read-only credentials). */
async function serverNowOf(cluster: Cluster): Promise<number> {
  const budgets = await openIfExists(cluster, BUDGETS_BUCKET);
  if (!budgets) return Date.now();
  return serverTimeOf(budgets, CLOCK_KEY, String(process.pid)).catch(() => Date.now());
}

async function streamExists(cluster: Cluster, name: string): Promise<boolean> {
  try {
    await cluster.jsm.streams.info(name);
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}

/** A bucket, or undefined when it does not exist (opening one never creates it). */
async function openIfExists(cluster: Cluster, name: string): Promise<KV | undefined> {
  if (!(await streamExists(cluster, `KV_${name}`))) return undefined;
  return cluster.bucket(name);
}
