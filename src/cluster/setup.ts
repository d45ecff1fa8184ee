import {
  AckPolicy,
  type JetStreamManager,
  RetentionPolicy,
  StorageType,
  type StreamConfig,
} from "@nats-io/jetstream";
import { CaesarError, messageOf } from "../support/errors.js";
import type { Cluster } from "./connection.js";
import {
  BUDGETS_BUCKET,
  CLAIMS_BUCKET,
  CONTROL_BUCKET,
  consumerName,
  DROPPED_BUCKET,
  LOG_STREAM,
  TASKS_STREAM,
  taskSubject,
  WORKERS_BUCKET,
} from "./names.js";

const MINUTE_NS = 60_000_000_000;
const DAY_MS = 86_400_000;

/**
 * Create caesar's streams and buckets where they are missing (any submitter or worker may be first).
 * Existing ones are used as they are: an operator may have created them with other limits or replicas.
 * File storage everywhere: a server that restarts loses nothing.
 */
export async function ensureInfrastructure(cluster: Cluster, replicas = 1): Promise<void> {
  await ensureStream(cluster.jsm, {
    name: TASKS_STREAM,
    subjects: ["caesar.tasks.>"],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    num_replicas: replicas,
    // A task submitted twice (a retry after a lost reply) is one task: its id is the message id.
    duplicate_window: 10 * MINUTE_NS,
  });
  await ensureStream(cluster.jsm, {
    name: LOG_STREAM,
    subjects: ["caesar.log.>"],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    num_replicas: replicas,
    max_age: 7 * 24 * 60 * MINUTE_NS,
    duplicate_window: 10 * MINUTE_NS,
  });
  await ensureBucket(cluster, CLAIMS_BUCKET, 30 * DAY_MS, replicas);
  await ensureBucket(cluster, CONTROL_BUCKET, 7 * DAY_MS, replicas);
  await ensureBucket(cluster, WORKERS_BUCKET, DAY_MS, replicas);
  await ensureBucket(cluster, BUDGETS_BUCKET, 2 * DAY_MS, replicas);
  await ensureBucket(cluster, DROPPED_BUCKET, 7 * DAY_MS, replicas);
}

async function ensureStream(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }) {
  try {
    await jsm.streams.info(config.name);
    return;
  } catch (error) {
    if (!isNotFound(error)) throw infrastructureError(config.name, error);
  }
  try {
    await jsm.streams.add(config);
  } catch (error) {
    // Created meanwhile by another process: use it.
    await jsm.streams.info(config.name).catch(() => {
      throw infrastructureError(config.name, error);
    });
  }
}

async function ensureBucket(cluster: Cluster, name: string, ttlMs: number, replicas: number) {
  try {
    await cluster.kvm.open(name).then((kv) => kv.status());
    return;
  } catch (error) {
    if (!isNotFound(error)) throw infrastructureError(name, error);
  }
  try {
    await cluster.kvm.create(name, { history: 1, ttl: ttlMs, storage: StorageType.File, replicas });
  } catch (error) {
    await cluster.kvm
      .open(name)
      .then((kv) => kv.status())
      .catch(() => {
        throw infrastructureError(name, error);
      });
  }
}

/**
 * The durable pull consumer every worker of `queue` shares for one agent. Explicit acks; a delivery not
 * acked nor marked in progress for `heartbeatMs` goes to another worker (the worker was lost).
 */
export async function ensureAgentConsumer(
  cluster: Cluster,
  queue: string,
  agent: string,
  heartbeatMs: number,
): Promise<string> {
  const name = consumerName(queue, agent);
  const ackWaitNs = heartbeatMs * 1_000_000;
  try {
    const info = await cluster.jsm.consumers.info(TASKS_STREAM, name);
    // `[cluster] heartbeat_timeout` changed since the consumer was made: the ack wait follows it (the
    // last worker to start wins — every worker of a queue should share one value).
    if (info.config.ack_wait !== ackWaitNs)
      await cluster.jsm.consumers.update(TASKS_STREAM, name, { ack_wait: ackWaitNs }).catch((error) => {
        throw infrastructureError(name, error);
      });
    return name;
  } catch (error) {
    if ((error as { code?: unknown }).code === "cluster_setup_failed") throw error;
    if (!isNotFound(error)) throw infrastructureError(name, error);
  }
  await cluster.jsm.consumers
    .add(TASKS_STREAM, {
      durable_name: name,
      filter_subject: taskSubject(queue, agent),
      ack_policy: AckPolicy.Explicit,
      ack_wait: ackWaitNs,
      max_deliver: -1,
      max_ack_pending: 10_000,
    })
    .catch(async (error) => {
      await cluster.jsm.consumers.info(TASKS_STREAM, name).catch(() => {
        throw infrastructureError(name, error);
      });
    });
  return name;
}

export function isNotFound(error: unknown): boolean {
  const text = messageOf(error).toLowerCase();
  const code = (error as { code?: unknown; api_error?: { err_code?: number } })?.api_error?.err_code;
  return code === 10059 || code === 10014 || text.includes("not found");
}

function infrastructureError(name: string, error: unknown): CaesarError {
  return new CaesarError("cluster_setup_failed", `Could not set up ${name} on the NATS server.`, {
    detail: `${messageOf(error)}. The account needs JetStream and the right to create streams and buckets (or an operator creates them: see docs/cluster.md).`,
    cause: error,
  });
}
