import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  type ClaimDecision,
  finishClaim,
  holdsClaim,
  readClaim,
  releaseClaim,
  takeClaim,
} from "../../src/cluster/claims.js";
import { type Cluster, connectCluster } from "../../src/cluster/connection.js";
import { isHolderAlive } from "../../src/cluster/holder.js";
import { clusterLedger, reserveClusterBudget, settleClusterBudget } from "../../src/cluster/ledger.js";
import { BUDGETS_BUCKET, CLAIMS_BUCKET, WORKERS_BUCKET } from "../../src/cluster/names.js";
import { serverTimeOf } from "../../src/cluster/server-clock.js";
import { ensureInfrastructure } from "../../src/cluster/setup.js";
import { encode, type Final, type WorkerRecord } from "../../src/cluster/wire.js";
import { resolvePlan } from "../../src/engine/lifecycle/plan.js";
import { parseDelegationRequest } from "../../src/engine/lifecycle/request.js";
import { createTask } from "../../src/engine/lifecycle/start.js";
import { controlPaths } from "../../src/engine/store/control.js";
import { accessTo, freePort, NatsServer, requireNatsServer, tempDir } from "../helpers/cluster.js";
import { makeRepo } from "../helpers/repo.js";

const NATS_SERVER = requireNatsServer();

const worker = (n: number) => ({ id: `w${n}`, host: "test", pid: 1000 + n });
const retry = { onWorkerLoss: "retry" as const, maxAttempts: 3 };

const final: Final = {
  outcome: "succeeded",
  exit: { code: 0, signal: null },
  report_status: null,
  report: null,
  error: null,
  started_at: null,
  finished_at: new Date().toISOString(),
  deadline_at: null,
  command: null,
  base_ref: null,
  start_tree: null,
  end_tree: null,
  result_commit: null,
  log_seq: 0,
};

describe.skipIf(!NATS_SERVER)("claims and the budget ledger on a real JetStream (compare-and-set)", () => {
  let server: NatsServer;
  let cluster: Cluster;

  beforeAll(async () => {
    server = new NatsServer(NATS_SERVER!, await freePort(), tempDir("caesar-claims-"));
    await server.start();
    cluster = await connectCluster(accessTo(server.url), "test");
    await ensureInfrastructure(cluster);
  });

  afterAll(async () => {
    await cluster?.close();
    await server?.stop();
  });

  it("gives a task to its first taker, and to a second one only as a new attempt that fences the first", async () => {
    const kv = await cluster.bucket(CLAIMS_BUCKET);
    const first = await takeClaim(kv, "t_claim01", 7, worker(1), retry);
    expect(first).toMatchObject({ kind: "run", claim: { attempt: 1, worker: { id: "w1" } } });
    // The queue delivered the same message again to w2: w1 stopped answering.
    const second = await takeClaim(kv, "t_claim01", 7, worker(2), retry);
    expect(second).toMatchObject({
      kind: "run",
      claim: { attempt: 2, lost: [{ worker: "w1", attempt: 1 }] },
    });
    const firstToken = (first as Extract<ClaimDecision, { kind: "run" }>).token;
    const secondToken = (second as Extract<ClaimDecision, { kind: "run" }>).token;
    // w1 comes back: it no longer holds the claim, and cannot record a result.
    expect(await holdsClaim(kv, "t_claim01", firstToken)).toBe(false);
    expect(
      await finishClaim(kv, (first as Extract<ClaimDecision, { kind: "run" }>).claim, firstToken, final),
    ).toBe(false);
    expect((await readClaim(kv, "t_claim01"))!.claim.state).toBe("running");
    // w2 records it; the queue's next delivery only needs an ack.
    expect(
      await finishClaim(kv, (second as Extract<ClaimDecision, { kind: "run" }>).claim, secondToken, final),
    ).toBe(true);
    expect(await takeClaim(kv, "t_claim01", 7, worker(3), retry)).toMatchObject({ kind: "finished" });
  });

  it("starts a new attempt for a task handed back, without counting its worker lost, and only with the holder's token", async () => {
    const kv = await cluster.bucket(CLAIMS_BUCKET);
    const first = (await takeClaim(kv, "t_release01", 9, worker(1), retry)) as Extract<
      ClaimDecision,
      { kind: "run" }
    >;
    expect(await releaseClaim(kv, first.claim, first.token + 1, "not ours")).toBe(false);
    expect(await releaseClaim(kv, first.claim, first.token, "start_fetch_failed: no remote")).toBe(true);
    expect((await readClaim(kv, "t_release01"))!.claim).toMatchObject({
      state: "released",
      handed_back: [{ worker: "w1", attempt: 1, reason: "start_fetch_failed: no remote" }],
    });
    // Handed back as many times as max_attempts by one worker: still a run, never a give-up (no one was lost).
    let decision = await takeClaim(kv, "t_release01", 9, worker(2), retry);
    for (let n = 0; n < 3; n++) {
      const held = decision as Extract<ClaimDecision, { kind: "run" }>;
      expect(held.kind).toBe("run");
      await releaseClaim(kv, held.claim, held.token, "again");
      decision = await takeClaim(kv, "t_release01", 9, worker(2), retry);
    }
    expect(decision).toMatchObject({ kind: "run", claim: { attempt: 5, lost: [], worker: { id: "w2" } } });
  });

  it("counts a redelivered task's holder as lost only when the registry agrees it is gone, by the server's clock alone", async () => {
    const claims = await cluster.bucket(CLAIMS_BUCKET);
    const workers = await cluster.bucket(WORKERS_BUCKET);
    const taken = await takeClaim(claims, "t_holder01", 7, worker(1), retry);
    expect(taken.kind).toBe("run");
    const record = (over: Partial<WorkerRecord>): WorkerRecord => ({
      ...worker(1),
      queue: "q",
      agents: ["nap"],
      max_parallel: 4,
      running: ["t_holder01"],
      started_at: new Date().toISOString(),
      heartbeat_at: new Date().toISOString(),
      // Three periods of a minute: "refreshed just now" holds however loaded the machine is.
      heartbeat_ms: 60_000,
      draining: false,
      quarantined: null,
      ...over,
    });
    // The judge: another worker, stamping the server's time by refreshing its own record.
    const serverNow = () =>
      serverTimeOf(workers, "w9", encode(record({ ...worker(9), running: [], heartbeat_ms: 5_000 })));
    const alive = () => isHolderAlive(claims, workers, "t_holder01", 7, serverNow);
    // No record at all: gone.
    expect(await alive()).toBe(false);
    // Refreshed just now by a holder whose clock runs ten minutes behind the judge's: alive.
    const tenMinutesAgo = new Date(Date.now() - 600_000).toISOString();
    await workers.put("w1", encode(record({ heartbeat_at: tenMinutesAgo, started_at: tenMinutesAgo })));
    expect(await alive()).toBe(true);
    // Another message for the task, not the one its claim holds: not this holder's concern.
    expect(await isHolderAlive(claims, workers, "t_holder01", 8, serverNow)).toBe(false);
    // Restarted (another pid), or no longer listing the task: gone.
    await workers.put("w1", encode(record({ pid: 4242 })));
    expect(await alive()).toBe(false);
    await workers.put("w1", encode(record({ running: [] })));
    expect(await alive()).toBe(false);
    // Silent for more than three periods of one second, by the server's clock — though its own clock,
    // an hour ahead, says it refreshed in the future: gone.
    const anHourAhead = new Date(Date.now() + 3_600_000).toISOString();
    await workers.put("w1", encode(record({ heartbeat_at: anHourAhead, heartbeat_ms: 1_000 })));
    await new Promise((resolve) => setTimeout(resolve, 4_500));
    expect(await alive()).toBe(false);
    // Finished: nothing to leave to anyone.
    await workers.put("w1", encode(record({})));
    expect(await alive()).toBe(true);
    if (taken.kind !== "run") throw new Error("not taken");
    expect(await finishClaim(claims, taken.claim, taken.token, final)).toBe(true);
    expect(await alive()).toBe(false);
  });

  it("drops a second message for a task another message's claim holds", async () => {
    const kv = await cluster.bucket(CLAIMS_BUCKET);
    await takeClaim(kv, "t_claim02", 10, worker(1), retry);
    expect(await takeClaim(kv, "t_claim02", 11, worker(2), retry)).toMatchObject({ kind: "duplicate" });
  });

  it('gives up a task whose worker was lost under on_worker_loss = "fail", and after max_attempts', async () => {
    const kv = await cluster.bucket(CLAIMS_BUCKET);
    await takeClaim(kv, "t_claim03", 1, worker(1), { onWorkerLoss: "fail", maxAttempts: 3 });
    expect(
      await takeClaim(kv, "t_claim03", 1, worker(2), { onWorkerLoss: "fail", maxAttempts: 3 }),
    ).toMatchObject({
      kind: "give-up",
      claim: { lost: [{ worker: "w1" }] },
    });
    for (const n of [1, 2, 3])
      expect((await takeClaim(kv, "t_claim04", 1, worker(n), retry)).kind).toBe("run");
    expect(await takeClaim(kv, "t_claim04", 1, worker(4), retry)).toMatchObject({
      kind: "give-up",
      claim: { attempt: 4 },
    });
  });

  it("keeps one line of ownership under concurrent takers: distinct attempts, only the last holds", async () => {
    const kv = await cluster.bucket(CLAIMS_BUCKET);
    const policy = { onWorkerLoss: "retry" as const, maxAttempts: 100 };
    const decisions = await Promise.all(
      Array.from({ length: 8 }, (_, n) => takeClaim(kv, "t_claim05", 3, worker(n), policy)),
    );
    const runs = decisions.filter((d): d is Extract<ClaimDecision, { kind: "run" }> => d.kind === "run");
    expect(runs).toHaveLength(8);
    expect(new Set(runs.map((d) => d.claim.attempt)).size).toBe(8);
    const holders = [];
    for (const d of runs) if (await holdsClaim(kv, "t_claim05", d.token)) holders.push(d.claim.attempt);
    expect(holders).toEqual([8]);
  });

  it("reserves a tree's budget across concurrent submitters without ever exceeding it", async () => {
    const limits = { max_tasks_per_hour: 3, max_cost_per_day: null };
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, n) =>
        reserveClusterBudget(cluster, "q", "t_tree01", [`t_child${n}`], limits, true),
      ),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(3);
    const refusals = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(refusals).toHaveLength(7);
    for (const refusal of refusals) expect((refusal.reason as { code: string }).code).toBe("budget_tasks");
    // A reservation whose agent never ran gives its place back.
    const ledger = JSON.parse((await (await cluster.bucket(BUDGETS_BUCKET)).get("q.t_tree01"))!.string()) as {
      entries: { task_id: string }[];
    };
    await settleClusterBudget(cluster, "q", "t_tree01", ledger.entries[0]!.task_id, false, 0);
    await reserveClusterBudget(cluster, "q", "t_tree01", ["t_child_late"], limits, true);
  });

  it("refuses a tree that spent its daily cost, counting what settled runs reported", async () => {
    const limits = { max_tasks_per_hour: null, max_cost_per_day: 1 };
    await reserveClusterBudget(cluster, "q", "t_tree02", ["t_a"], limits, true);
    await settleClusterBudget(cluster, "q", "t_tree02", "t_a", true, 1.25);
    await expect(reserveClusterBudget(cluster, "q", "t_tree02", ["t_b"], limits, true)).rejects.toMatchObject(
      {
        code: "budget_cost",
      },
    );
  });
});

describe.skipIf(!NATS_SERVER)("the cluster's budget windows, on the server's clock", () => {
  const HOUR = 3_600_000;
  let server: NatsServer;
  let cluster: Cluster;
  beforeAll(async () => {
    server = new NatsServer(NATS_SERVER!, await freePort(), tempDir("caesar-ledger-clock-"));
    await server.start();
    cluster = await connectCluster(accessTo(server.url), "test");
    await ensureInfrastructure(cluster);
  });
  afterAll(async () => {
    vi.useRealTimers();
    await cluster?.close();
    await server?.stop();
  });

  /** Run `fn` as on a machine whose clock is `offsetMs` off the real time (only Date is shifted). */
  async function withClockOff<T>(offsetMs: number, fn: () => Promise<T>): Promise<T> {
    vi.useFakeTimers({ toFake: ["Date"], shouldAdvanceTime: true });
    vi.setSystemTime(Date.now() + offsetMs);
    try {
      return await fn();
    } finally {
      vi.useRealTimers();
    }
  }

  async function entriesOf(tree: string) {
    const entry = await (await cluster.bucket(BUDGETS_BUCKET)).get(`q.${tree}`);
    return (JSON.parse(entry!.string()) as { entries: { task_id: string; at: string }[] }).entries;
  }

  it("refuses a submitter whose clock runs two days ahead the places an hour's tasks took", async () => {
    const limits = { max_tasks_per_hour: 2, max_cost_per_day: null };
    await reserveClusterBudget(cluster, "q", "t_clock01", ["t_clock01", "t_clock01a"], limits, true);
    // By its clock, both places were taken two days ago (and a day-old entry is pruned): the server's
    // clock says minutes.
    await expect(
      withClockOff(2 * 24 * HOUR, () =>
        reserveClusterBudget(cluster, "q", "t_clock01", ["t_clock01b"], limits, true),
      ),
    ).rejects.toMatchObject({ code: "budget_tasks" });
    expect((await entriesOf("t_clock01")).map((e) => e.task_id)).toEqual(["t_clock01", "t_clock01a"]);
  });

  it("stamps a reservation with the server's time, not with a submitter's clock two hours behind", async () => {
    const limits = { max_tasks_per_hour: 1, max_cost_per_day: null };
    await withClockOff(-2 * HOUR, () =>
      reserveClusterBudget(cluster, "q", "t_clock02", ["t_clock02"], limits, true),
    );
    const [entry] = await entriesOf("t_clock02");
    expect(Math.abs(Date.parse(entry!.at) - Date.now())).toBeLessThan(HOUR / 2);
    // So a submitter with the right time finds the hour's one place taken.
    await expect(
      reserveClusterBudget(cluster, "q", "t_clock02", ["t_clock02a"], limits, true),
    ).rejects.toMatchObject({ code: "budget_tasks" });
  });
});

describe.skipIf(!NATS_SERVER)("the ledger a remote task reserves in", () => {
  let server: NatsServer;
  let cluster: Cluster;
  beforeAll(async () => {
    server = new NatsServer(NATS_SERVER!, await freePort(), tempDir("caesar-ledger-"));
    await server.start();
    cluster = await connectCluster(accessTo(server.url), "test");
    await ensureInfrastructure(cluster);
  });
  afterAll(async () => {
    await cluster?.close();
    await server?.stop();
  });

  it("counts a tree rooted in a task that runs here in this project's file ledger, any other in the cluster's", async () => {
    const root = makeRepo();
    const { plan } = await resolvePlan(
      parseDelegationRequest({ objective: "a local root", agent: "reference", on: "local" }),
      { root },
    );
    const local = await createTask(plan);
    const ledger = clusterLedger(cluster, "q", root);
    const limits = { max_tasks_per_hour: 2, max_cost_per_day: null };
    // The local root took one of its tree's two places in the file ledger: one more fits, then none.
    await ledger.reserve(local.id, ["t_remotechild01"], limits, true);
    await expect(ledger.reserve(local.id, ["t_remotechild02"], limits, true)).rejects.toMatchObject({
      code: "budget_tasks",
    });
    const file = JSON.parse(readFileSync(join(controlPaths(root).budgets, `${local.id}.json`), "utf8")) as {
      entries: { task_id: string }[];
    };
    expect(file.entries.map((e) => e.task_id)).toEqual([local.id, "t_remotechild01"]);
    expect(await (await cluster.bucket(BUDGETS_BUCKET)).get(`q.${local.id}`)).toBeNull();
    // A new tree (a root sent to the cluster) counts in the cluster's.
    await ledger.reserve("t_newtree0000001", ["t_newtree0000001"], limits, false);
    expect(await (await cluster.bucket(BUDGETS_BUCKET)).get("q.t_newtree0000001")).not.toBeNull();
  });
});
