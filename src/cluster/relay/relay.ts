import { existsSync } from "node:fs";
import { relayPaths } from "../../engine/conductor/relay.js";
import { ChangeWatch } from "../../engine/store/change-watch.js";
import { projectPaths } from "../../engine/store/project.js";
import { loadPlan } from "../../engine/store/task-plan.js";
import { listTaskIds, readState, taskDirOf } from "../../engine/store/task-store.js";
import { messageOf } from "../../support/errors.js";
import { acquireLock } from "../../support/lock.js";
import { type Cluster, type ClusterAccess, connectCluster } from "../connection.js";
import { ensureInfrastructure } from "../setup.js";
import { TaskMirror } from "./mirror.js";

export interface RelayOptions {
  /** Exit after this long without a remote task to follow (ms). */
  idleMs?: number;
  signal?: AbortSignal;
  log?: (line: string) => void;
}

/**
 * The relay of a project: follows every remote task of the project that has not finished (one mirror
 * each, over one connection per cluster), picks up new ones as they are created, and exits once none is
 * left for a while. One per project, held by a lock; a second one exits at once.
 */
export async function runRelay(root: string, options: RelayOptions = {}): Promise<"done" | "busy"> {
  const log =
    options.log ?? ((line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`));
  let release = await tryLock(root);
  if (!release) return "busy";
  const stop = new AbortController();
  options.signal?.addEventListener("abort", () => stop.abort(), { once: true });
  const pool = new ClusterPool(stop.signal, log);
  const mirrors = new Map<string, Promise<void>>();
  const settled = new Set<string>();
  const tasksDir = projectPaths(root).tasks;
  const watch = new ChangeWatch(tasksDir, { pollMs: 1_000 });
  const idleMs = options.idleMs ?? 10_000;
  let idleSince = Date.now();
  log(`[relay] started for ${root} (pid ${process.pid})`);
  try {
    for (;;) {
      // Stopped (SIGTERM), or its project removed: end now, whatever the mirrors are waiting for.
      if (stop.signal.aborted) break;
      if (!existsSync(tasksDir)) {
        log(`[relay] ${tasksDir} is gone: stopping`);
        break;
      }
      await attachNew(root, mirrors, settled, pool, stop.signal, log);
      const paused = [...pausedUntil.keys()].some((id) => !settled.has(id));
      if (mirrors.size > 0 || paused) idleSince = Date.now();
      else if (Date.now() - idleSince >= idleMs || stop.signal.aborted) {
        // Let go of the lock first, then look once more: a task created meanwhile starts a relay of its
        // own (it saw none), or is found here — never neither.
        await release();
        release = undefined;
        await attachNew(root, mirrors, settled, pool, stop.signal, log);
        if (mirrors.size === 0 || stop.signal.aborted) break;
        release = await tryLock(root);
        if (!release) break;
        idleSince = Date.now();
      }
      await watch.next(1_000, stop.signal);
    }
  } finally {
    watch.close();
    stop.abort();
    // A mirror waiting on a server that is gone may not hear the stop: it is not waited for long.
    const stragglers = await settleWithin(mirrors.values(), MIRRORS_STOP_MS);
    if (stragglers > 0) log(`[relay] ${stragglers} task mirror(s) did not stop within ${MIRRORS_STOP_MS} ms`);
    else await pool.closeAll();
    await release?.();
    log(`[relay] stopped for ${root}`);
  }
  return "done";
}

/** How long a stopping relay waits for its task mirrors. */
const MIRRORS_STOP_MS = 10_000;

/** Wait for `promises` to settle, at most `ms`: how many had not by then. */
async function settleWithin(promises: Iterable<Promise<unknown>>, ms: number): Promise<number> {
  const pending = new Set<Promise<unknown>>();
  for (const promise of promises) {
    pending.add(promise);
    void promise.finally(() => pending.delete(promise)).catch(() => undefined);
  }
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.allSettled([...pending]),
    new Promise((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
  return pending.size;
}

/** Tasks whose mirror ended early, and when to follow them again. */
const pausedUntil = new Map<string, number>();

async function tryLock(root: string): Promise<(() => Promise<void>) | undefined> {
  try {
    const held = await acquireLock(relayPaths(root).lock, { timeoutMs: 0 });
    return async () => held.release();
  } catch {
    return undefined;
  }
}

async function attachNew(
  root: string,
  mirrors: Map<string, Promise<void>>,
  settled: Set<string>,
  pool: ClusterPool,
  signal: AbortSignal,
  log: (line: string) => void,
): Promise<void> {
  for (const id of await listTaskIds(root)) {
    if (mirrors.has(id) || settled.has(id) || signal.aborted) continue;
    if ((pausedUntil.get(id) ?? 0) > Date.now()) continue;
    const dir = taskDirOf(root, id);
    let access: ClusterAccess;
    try {
      const state = await readState(dir);
      // A local task never becomes remote, and a finished one never runs again: skip them from now on.
      if (!state.remote || state.phase === "finished") {
        settled.add(id);
        continue;
      }
      const plan = await loadPlan(dir);
      if (!plan.remote) {
        settled.add(id);
        continue;
      }
      access = plan.remote;
      // Connecting may wait for a server that is down: follow the others meanwhile.
      const replicas = plan.remote.replicas;
      const following = (async () => {
        try {
          const cluster = await pool.get(access, replicas);
          if (cluster) await new TaskMirror(id, dir, cluster, log).run(signal);
        } catch (error) {
          log(`[relay] ${id}: ${messageOf(error)}`);
        } finally {
          const after = await readState(dir).catch(() => undefined);
          if (!after || after.phase === "finished") settled.add(id);
          // Ended without finishing it (an error, logged): follow it again, but not in a tight loop.
          else pausedUntil.set(id, Date.now() + 5_000);
        }
      })();
      mirrors.set(id, following);
      void following.finally(() => mirrors.delete(id));
    } catch {
      // a directory being created (no state yet), or damaged: looked at again on the next pass
    }
  }
}

/** One connection per cluster (tasks may name several), made on first use, retried while a server is down. */
class ClusterPool {
  private readonly clusters = new Map<string, Promise<Cluster | undefined>>();

  constructor(
    private readonly signal: AbortSignal,
    private readonly log: (line: string) => void,
  ) {}

  get(access: ClusterAccess, replicas: number): Promise<Cluster | undefined> {
    const key = JSON.stringify(access);
    let cluster = this.clusters.get(key);
    if (!cluster) {
      cluster = this.connect(access, replicas);
      this.clusters.set(key, cluster);
    }
    return cluster;
  }

  private async connect(access: ClusterAccess, replicas: number): Promise<Cluster | undefined> {
    for (let delay = 500; !this.signal.aborted; delay = Math.min(delay * 2, 10_000)) {
      try {
        const cluster = await connectCluster(access, "caesar relay");
        await ensureInfrastructure(cluster, replicas);
        return cluster;
      } catch (error) {
        this.log(`[relay] ${access.servers.join(",")}: ${messageOf(error)} (retrying)`);
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
    return undefined;
  }

  async closeAll(): Promise<void> {
    const all = await Promise.all(this.clusters.values());
    await Promise.allSettled(all.map((cluster) => cluster?.close()));
  }
}
