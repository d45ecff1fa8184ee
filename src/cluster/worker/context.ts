import type { KV } from "@nats-io/kv";
import type { EffectiveConfig } from "../../config/effective.js";
import type { RemotePlan } from "../../engine/store/task-plan.js";
import type { Cluster, ClusterAccess } from "../connection.js";
import type { WorkerRef } from "../wire.js";
import type { WorkerHealth } from "./health.js";

/** What every task of a worker shares. */
export interface WorkerContext {
  cluster: Cluster;
  access: ClusterAccess;
  /** The worker's clone: its project root, and the top of its git work tree. */
  root: string;
  top: string;
  gitRemote: string;
  queue: string;
  queueOverride: string | null;
  replicas: number;
  heartbeatMs: number;
  me: WorkerRef;
  /** The agents this worker serves, and its clone's configuration (its own policy). */
  agents: readonly string[];
  config: EffectiveConfig;
  claims: KV;
  control: KV;
  /** Where the queue messages it drops or refuses are recorded (`caesar cluster status` lists them). */
  dropped: KV;
  /** The NATS server's time now (this worker's registry record refreshed, and when the server stored it). */
  serverNow(): Promise<number>;
  log(line: string): void;
  /** Its own faults in a row, and whether it quarantined itself. */
  health: WorkerHealth;
  /** The tasks this worker holds changed: its registry record is rewritten now, not at the next refresh. */
  onHeldChange(): void;
}

/**
 * The cluster as a task running on this worker sees it: its own delegations go back to the cluster
 * (their budget is the tree's, kept there), through this worker's access to it.
 */
export function remotePlanFor(
  context: WorkerContext,
  policy: { on_worker_loss: "retry" | "fail"; max_attempts: number; retry: RemotePlan["retry"] },
): RemotePlan {
  return {
    ...context.access,
    git_remote: context.gitRemote,
    queue: context.queueOverride,
    on_worker_loss: policy.on_worker_loss,
    max_attempts: policy.max_attempts,
    retry: policy.retry,
    heartbeat_ms: context.heartbeatMs,
    replicas: context.replicas,
  };
}
