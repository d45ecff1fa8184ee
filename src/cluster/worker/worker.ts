import { hostname } from "node:os";
import type { Consumer } from "@nats-io/jetstream";
import { findAdapter, listAdapters } from "../../agents/registry.js";
import type { EffectiveConfig } from "../../config/effective.js";
import { recordWorker } from "../../engine/conductor/worker-record.js";
import { recoverTask } from "../../engine/lifecycle/recover.js";
import { loadAllTasks } from "../../engine/store/task-store.js";
import { admissionOf } from "../../policy/admission.js";
import { parseDuration } from "../../support/duration.js";
import { CaesarError, messageOf, UsageError } from "../../support/errors.js";
import { flushTelemetry } from "../../support/telemetry/spans.js";
import { gitOut } from "../../workspace/git.js";
import { claimsBucket } from "../claims.js";
import { type Cluster, type ClusterAccess, connectCluster } from "../connection.js";
import {
  CONTROL_BUCKET,
  DROPPED_BUCKET,
  queueNameOf,
  TASKS_STREAM,
  WORKERS_BUCKET,
  workerIdOf,
} from "../names.js";
import { serverTimeOf } from "../server-clock.js";
import { ensureAgentConsumer, ensureInfrastructure } from "../setup.js";
import { encode, type WorkerRecord } from "../wire.js";
import { Capacity } from "./capacity.js";
import type { WorkerContext } from "./context.js";
import { WorkerHealth } from "./health.js";
import type { HeldTask } from "./held-task.js";
import { pauseUnless, within } from "./pause.js";
import { pruneRemoteRefs } from "./prune.js";
import { reapLostWorkers } from "./reaper.js";
import { checkWorkerHealth } from "./self-check.js";
import { sweepForeignAttempts } from "./sweep.js";
import { handleDelivery } from "./task-run.js";

export interface WorkerOptions {
  root: string;
  config: EffectiveConfig;
  access: ClusterAccess;
  /** The agents to serve (default: every agent installed here and allowed by this clone's policy). */
  agents?: string[];
  maxParallel: number;
  name?: string;
  gitRemote: string;
  queueOverride: string | null;
  heartbeatMs: number;
  replicas: number;
  /** First abort: drain (take nothing new, finish what runs). Second: stop now (the queue re-runs them elsewhere). */
  drain: AbortSignal;
  stopNow: AbortSignal;
  log(line: string): void;
  /** Called once the worker takes tasks (its id, agents and queue). */
  onReady?(info: { id: string; agents: string[]; queue: string }): void;
}

/** How long one pull waits for a task before it lets another agent's puller have the capacity. */
const PULL_EXPIRES_MS = 5_000;
const REGISTRY_EVERY_MS = 5_000;
/** The remote's refs/caesar/ are pruned at start and once an hour (720 refreshes of 5 s). */
const PRUNE_EVERY_REFRESHES = 720;
/** How long a stopping worker waits for the server to take its goodbye (its record's removal, a drain). */
const STOP_GRACE_MS = 3_000;

/**
 * `caesar worker`: one long-lived process that takes tasks from the cluster's queue for the agents it
 * has, at most `maxParallel` at once, and conducts each in-process exactly as a local task (worktree,
 * adapters, recovery, reconciliation), publishing what happens as it happens.
 */
export async function runWorker(options: WorkerOptions): Promise<void> {
  const { root, log } = options;
  const top = await gitOut(root, ["rev-parse", "--show-toplevel"]).catch(() => {
    throw new UsageError("worker_needs_clone", `${root} is not a git clone.`, {
      detail: "Run the worker in a clone of the remote the submitters push to (git clone <remote>).",
    });
  });
  const agents = await selectAgents(options);
  const head = await gitOut(top, ["rev-parse", "HEAD"]).catch(() => {
    throw new UsageError("worker_needs_commit", `${top} has no commit.`, {
      detail: "Clone the shared repository.",
    });
  });
  const queue = await queueNameOf(top, head, options.queueOverride);
  const keepResultsMs = parseDuration(options.config.cluster.keep_results.value, "[cluster] keep_results");
  const id = workerIdOf(hostname(), process.pid, options.name);
  const me = { id, host: hostname(), pid: process.pid };

  // Tasks a previous worker in this clone left behind (killed): finished here, their agents stopped.
  for (const record of await loadAllTasks(root)) {
    if (record.state.phase !== "finished" && !record.state.remote)
      await recoverTask(record, "worker").catch(() => undefined);
  }

  // Told to stop before it ever reached the server: nothing runs, so it stops now.
  const cluster = await connectWithRetry(
    options.access,
    `caesar worker ${id}`,
    [options.drain, options.stopNow],
    log,
  );
  if (!cluster) return;
  // Said in the clone's control directory while it runs: the commands its tasks' brokers start believe it.
  const unrecord = await recordWorker(root);
  const held = new Map<string, HeldTask>();
  const capacity = new Capacity(options.maxParallel);
  const health = new WorkerHealth((reason) => {
    log(`[worker] ${id} quarantined itself: ${reason}. It takes no new task; restart it once fixed.`);
    void register?.();
  });
  let register: (() => Promise<unknown>) | undefined;
  try {
    // After the connection: credentials refused say so first. Before any task is taken.
    await checkWorkerHealth(top, options.gitRemote, id);
    await ensureInfrastructure(cluster, options.replicas);
    const startedAt = new Date().toISOString();
    const record = (draining: boolean): WorkerRecord => ({
      id,
      host: me.host,
      pid: me.pid,
      queue,
      agents,
      max_parallel: options.maxParallel,
      running: [...held.keys()],
      started_at: startedAt,
      heartbeat_at: new Date().toISOString(),
      heartbeat_ms: REGISTRY_EVERY_MS,
      draining,
      quarantined: health.quarantined,
    });
    const workers = await cluster.bucket(WORKERS_BUCKET);
    register = () => workers.put(id, encode(record(options.drain.aborted))).catch(() => undefined);
    const context: WorkerContext = {
      cluster,
      access: options.access,
      root,
      top,
      gitRemote: options.gitRemote,
      queue,
      queueOverride: options.queueOverride,
      replicas: options.replicas,
      heartbeatMs: options.heartbeatMs,
      me,
      agents,
      config: options.config,
      claims: await claimsBucket(cluster),
      control: await cluster.bucket(CONTROL_BUCKET),
      dropped: await cluster.bucket(DROPPED_BUCKET),
      serverNow: () => serverTimeOf(workers, id, encode(record(options.drain.aborted))),
      log,
      onHeldChange: () => void register?.(),
      health,
    };
    // What earlier lives of this clone's worker left (killed, fenced): swept before any task is taken.
    await sweepForeignAttempts(context, new Set(held.keys())).catch((error) =>
      log(`[worker] sweeping worktrees: ${messageOf(error)}`),
    );
    // The shared remote's refs/caesar/: results kept past [cluster] keep_results, start refs of ended tasks.
    const prune = () =>
      pruneRemoteRefs(context, keepResultsMs)
        .then(({ results, starts }) => {
          if (results.length + starts.length > 0)
            log(
              `[worker] pruned ${results.length} result ref(s) and ${starts.length} start ref(s) from ${options.gitRemote}`,
            );
        })
        .catch((error) => log(`[worker] pruning ${options.gitRemote}: ${messageOf(error)}`));
    await prune();
    const consumers: { agent: string; consumer: Consumer }[] = [];
    for (const agent of agents) {
      const name = await ensureAgentConsumer(cluster, queue, agent, options.heartbeatMs);
      consumers.push({ agent, consumer: await cluster.js.consumers.get(TASKS_STREAM, name) });
    }
    await register();
    let refreshes = 0;
    const registry = setInterval(() => {
      void register?.();
      // Once a minute, the records of workers gone for good are removed (any live worker may do it).
      if (++refreshes % 12 === 0) {
        void reapLostWorkers(workers, context.claims, context.serverNow, log).catch(() => undefined);
        void sweepForeignAttempts(context, new Set(held.keys())).catch(() => undefined);
      }
      if (refreshes % PRUNE_EVERY_REFRESHES === 0) void prune();
    }, REGISTRY_EVERY_MS);
    // Back from a server restart: say at once that this worker and its tasks are alive, before the queue's
    // ack wait hands them to others.
    const offReconnect = cluster.onReconnect(() => {
      for (const task of held.values()) task.msg.working();
      void register?.();
    });
    log(`[worker] ${id} serving ${agents.join(", ")} on queue ${queue} (max ${options.maxParallel} at once)`);
    options.onReady?.({ id, agents, queue });

    options.stopNow.addEventListener(
      "abort",
      () => {
        for (const task of held.values()) {
          task.abandoned = true;
          task.abort.abort();
        }
      },
      { once: true },
    );
    const inFlight = new Set<Promise<void>>();
    // Pulling stops when the worker is told to stop, or quarantines itself.
    const stopPulling = AbortSignal.any([options.drain, health.quarantine.signal]);
    await Promise.all(
      consumers.map(({ agent, consumer }) =>
        pull(agent, consumer, capacity, stopPulling, log, (msg) => {
          const handled = handleDelivery(context, msg, held)
            .catch((error) => log(`[worker] ${messageOf(error)}`))
            .finally(() => {
              capacity.release();
              inFlight.delete(handled);
              void register?.();
            });
          inFlight.add(handled);
          void register?.();
        }),
      ),
    );
    // Quarantined: it stays, saying so in the registry, until it is told to stop.
    while (!options.drain.aborted) await pauseUnless(3_600_000, options.drain);
    // Draining: what runs finishes (or is abandoned on the second signal), then the worker leaves.
    await Promise.allSettled(inFlight);
    clearInterval(registry);
    offReconnect();
    // A server out of reach must not hold the stop: the record goes stale and is reaped instead.
    await within(STOP_GRACE_MS, workers.delete(id));
    log(`[worker] ${id} stopped`);
  } finally {
    await unrecord().catch(() => undefined);
    await within(STOP_GRACE_MS, cluster.close());
    // Its tasks' last spans, for a bounded time (a collector that never answers does not keep it).
    await flushTelemetry(2000);
  }
}

async function pull(
  agent: string,
  consumer: Consumer,
  capacity: Capacity,
  drain: AbortSignal,
  log: (line: string) => void,
  take: (msg: NonNullable<Awaited<ReturnType<Consumer["next"]>>>) => void,
): Promise<void> {
  while (!drain.aborted) {
    if (!(await capacity.acquire(drain))) return;
    let msg: Awaited<ReturnType<Consumer["next"]>> = null;
    try {
      // Told to stop while a pull waits (a server out of reach holds it until its heartbeats are missed):
      // stop now; a message the pull still brings goes back to the queue.
      const pending = consumer.next({ expires: PULL_EXPIRES_MS });
      msg = await untilAborted(pending, drain);
      if (msg === null && drain.aborted) {
        void pending.then((late) => late?.nak()).catch(() => undefined);
        capacity.release();
        return;
      }
    } catch (error) {
      // The server is away (restarting): wait and pull again.
      log(`[worker] pulling ${agent}: ${messageOf(error)}`);
      capacity.release();
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      continue;
    }
    if (!msg) {
      capacity.release();
      continue;
    }
    if (drain.aborted) {
      // Taken just as the worker was told to stop: back to the queue at once, for another worker.
      msg.nak();
      capacity.release();
      return;
    }
    take(msg);
  }
}

/** `pending`, or null as soon as `signal` is aborted (at once if it is already). */
function untilAborted<T>(pending: Promise<T>, signal: AbortSignal): Promise<T | null> {
  if (signal.aborted) return Promise.resolve(null);
  return new Promise<T | null>((resolve, reject) => {
    const onAbort = () => resolve(null);
    signal.addEventListener("abort", onAbort, { once: true });
    pending.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/**
 * The agents this worker serves: those asked for (each must be known, allowed by this clone's policy and
 * installed here), or every agent that is installed and allowed.
 */
async function selectAgents(options: WorkerOptions): Promise<string[]> {
  const { config, root } = options;
  if (options.agents && options.agents.length > 0) {
    const problems: string[] = [];
    for (const id of options.agents) {
      let adapter: ReturnType<typeof findAdapter>;
      try {
        adapter = findAdapter(config, root, id);
      } catch (error) {
        problems.push(messageOf(error));
        continue;
      }
      const admission = admissionOf(config, id);
      if (!admission.allowed) problems.push(`${id}: ${admission.reason} (${admission.remedy})`);
      else if (!(await adapter.detect()).installed) problems.push(`${id}: not installed on this machine`);
    }
    if (problems.length > 0) {
      throw new UsageError("worker_agents", `This worker cannot serve every agent asked for.`, {
        detail: `${problems.join("\n")}\nA worker only takes tasks for agents it has: fix these, or leave them out of --agents.`,
      });
    }
    return [...new Set(options.agents)];
  }
  const served: string[] = [];
  for (const adapter of listAdapters(config, root)) {
    if (!admissionOf(config, adapter.id).allowed) continue;
    if ((await adapter.detect()).installed) served.push(adapter.id);
  }
  if (served.length === 0) {
    throw new CaesarError(
      "worker_no_agent",
      "No agent is installed and allowed here: this worker would serve nothing.",
      {
        detail: "Install an agent CLI (see `caesar agents list`), or declare one under [[agent]].",
      },
    );
  }
  return served;
}

async function connectWithRetry(
  access: ClusterAccess,
  name: string,
  stop: AbortSignal[],
  log: (line: string) => void,
): Promise<Cluster | undefined> {
  for (let delay = 500; !stop.some((signal) => signal.aborted); delay = Math.min(delay * 2, 10_000)) {
    try {
      return await connectCluster(access, name);
    } catch (error) {
      // Wrong credentials do not get better by waiting: say so and stop, as for any bad configuration.
      const code = (error as { code?: string }).code;
      if (
        code === "nats_auth_refused" ||
        code === "nats_credentials_unreadable" ||
        code === "nats_credentials_invalid"
      )
        throw error;
      log(`[worker] ${messageOf(error)} (retrying in ${Math.round(delay / 1000)} s)`);
      await pauseUnless(delay, ...stop);
    }
  }
  return undefined;
}
