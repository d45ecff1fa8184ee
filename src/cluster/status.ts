import { liveEntry } from "./cas.js";
import type { Cluster } from "./connection.js";
import { consumerName, queueSubjects, TASKS_STREAM, WORKERS_BUCKET } from "./names.js";
import { isNotFound } from "./setup.js";
import { decode, type WorkerRecord, WorkerRecordSchema } from "./wire.js";

export interface WorkerView extends WorkerRecord {
  /** Milliseconds since its last heartbeat. */
  age_ms: number;
  /** No heartbeat for three periods: probably gone (its tasks go to others after the heartbeat timeout). */
  stale: boolean;
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
  workers: WorkerView[];
  queue_depth: QueueDepth[];
  tasks_per_worker: Record<string, string[]>;
}

/** `caesar cluster status`: workers (agents, capacity, load, last heartbeat), queue depth, tasks per worker. */
export async function readClusterStatus(cluster: Cluster, queue: string): Promise<ClusterStatus> {
  const now = Date.now();
  const workers: WorkerView[] = [];
  const kv = await cluster.bucket(WORKERS_BUCKET).catch(() => undefined);
  if (kv) {
    const keys: string[] = [];
    for await (const key of await kv.keys()) keys.push(key);
    for (const key of keys.sort()) {
      const entry = await liveEntry(kv, key);
      if (!entry) continue;
      const record = decode(WorkerRecordSchema, entry.value);
      if (!record) continue;
      const age = now - Date.parse(record.heartbeat_at);
      workers.push({ ...record, age_ms: age, stale: age > 3 * record.heartbeat_ms });
    }
  }
  const depth = new Map<string, QueueDepth>();
  try {
    const info = await cluster.jsm.streams.info(TASKS_STREAM, { subjects_filter: queueSubjects(queue) });
    for (const [subject, count] of Object.entries(info.state.subjects ?? {})) {
      const agent = subject.slice(queueSubjects(queue).length - 1);
      depth.set(agent, { agent, waiting: count, running: 0, served: false });
    }
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  const agents = new Set([
    ...depth.keys(),
    ...workers.filter((w) => w.queue === queue).flatMap((w) => w.agents),
  ]);
  for (const agent of agents) {
    const row = depth.get(agent) ?? { agent, waiting: 0, running: 0, served: false };
    try {
      const info = await cluster.jsm.consumers.info(TASKS_STREAM, consumerName(queue, agent));
      // A work queue keeps a taken task until it is acked: the stream counts it, the consumer says it is taken.
      row.running = info.num_ack_pending;
      row.waiting = info.num_pending;
      row.served = true;
    } catch {
      row.served = false;
    }
    depth.set(agent, row);
  }
  const tasksPerWorker: Record<string, string[]> = {};
  for (const worker of workers) tasksPerWorker[worker.id] = worker.running;
  return {
    servers: cluster.servers,
    server_version: cluster.nc.info?.version ?? "?",
    queue,
    workers,
    queue_depth: [...depth.values()].sort((a, b) => a.agent.localeCompare(b.agent)),
    tasks_per_worker: tasksPerWorker,
  };
}
