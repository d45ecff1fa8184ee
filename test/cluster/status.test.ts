import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readClaim } from "../../src/cluster/claims.js";
import { type Cluster, connectCluster } from "../../src/cluster/connection.js";
import { CLAIMS_BUCKET } from "../../src/cluster/names.js";
import { type ClusterStatus, readClusterStatus } from "../../src/cluster/status.js";
import { parseJsonOutput } from "../helpers/cli.js";
import { accessTo, eventually, fixtureAgents, readState, requireNatsServer } from "../helpers/cluster.js";
import { ClusterLab } from "../helpers/cluster-lab.js";
import { git } from "../helpers/repo.js";

const NATS_SERVER = requireNatsServer();
const MINUTE = 60_000;

describe.skipIf(!NATS_SERVER)("caesar cluster status", () => {
  let lab: ClusterLab;

  const caesar = (args: string[]) => lab.caesar(args);
  const logs = () => lab.logs();

  beforeAll(async () => {
    lab = await ClusterLab.start(NATS_SERVER!, {
      name: "status",
      config: (dir) =>
        ["[cluster]", 'heartbeat_timeout = "6s"', "", fixtureAgents(join(dir, "runs.log"))].join("\n"),
    });
  }, 2 * MINUTE);

  afterAll(() => lab?.stop(), 2 * MINUTE);

  it("says there is no queue and no worker yet on a server caesar never used, and creates nothing", async () => {
    const text = await caesar(["cluster", "status", "--on", lab.url]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain("No queue and no worker yet");
    const json = await caesar(["cluster", "status", "--on", lab.url, "--json"]);
    expect(json.code, json.stderr).toBe(0);
    expect(parseJsonOutput<ClusterStatus>(json)).toMatchObject({
      ready: false,
      workers: [],
      queue_depth: [],
    });
    // Still nothing there: a status is no set-up.
    expect(
      parseJsonOutput<ClusterStatus>(await caesar(["cluster", "status", "--on", lab.url, "--json"])).ready,
    ).toBe(false);
  });

  it(
    "lists a task on its worker as soon as it is claimed, marks a killed worker lost without the task another took over, reaps it, and its clone's stale worktrees are swept",
    async () => {
      const w1 = await lab.worker("w1", ["--agents", "long", "--max-parallel", "4"]);
      const cluster: Cluster = await connectCluster(accessTo(lab.url), "status test");
      try {
        const claims = await cluster.bucket(CLAIMS_BUCKET);
        const queue = w1.ready!.queue;
        const statusNow = () => readClusterStatus(cluster, queue);
        const ids: string[] = [];
        // Each task is listed on its worker within two seconds of its claim — not at the worker's next
        // 5 s refresh. Three tasks, one after another: a late listing could not pass thrice by luck.
        for (let n = 0; n < 3; n++) {
          const sent = await caesar([
            "run",
            "--on",
            lab.url,
            "--agent",
            "long",
            "--detach",
            "--json",
            `long ${n}`,
          ]);
          expect(sent.code, sent.stderr).toBe(0);
          const id = parseJsonOutput<{ task_id: string }>(sent).task_id;
          ids.push(id);
          let claimedAt = 0;
          let listedAt = 0;
          const deadline = Date.now() + MINUTE;
          while (listedAt === 0 && Date.now() < deadline) {
            if (claimedAt === 0 && (await readClaim(claims, id))?.claim.state === "running")
              claimedAt = Date.now();
            if (claimedAt > 0 && (await statusNow()).workers.find((w) => w.id === "w1")?.running.includes(id))
              listedAt = Date.now();
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
          expect(claimedAt, `${id} claimed\n${logs()}`).toBeGreaterThan(0);
          expect(listedAt - claimedAt, `${id} listed on w1 after its claim`).toBeLessThan(2_000);
        }
        const live = await statusNow();
        expect(live.ready).toBe(true);
        expect(live.workers.find((w) => w.id === "w1")).toMatchObject({ condition: "serving", stale: false });
        expect(live.queue_depth.find((d) => d.agent === "long")).toMatchObject({ running: 3, served: true });

        // Killed: lost after three silent registry periods, still shown with the tasks it held.
        w1.kill9();
        let lost: ClusterStatus | undefined;
        const lostBy = Date.now() + MINUTE;
        while (Date.now() < lostBy) {
          lost = await statusNow();
          if (lost.workers.find((w) => w.id === "w1")?.condition === "lost") break;
          await new Promise((resolve) => setTimeout(resolve, 1_000));
        }
        expect(lost!.workers.find((w) => w.id === "w1")).toMatchObject({ condition: "lost", stale: true });
        expect(lost!.workers.find((w) => w.id === "w1")!.running.sort()).toEqual([...ids].sort());
        const text = await caesar(["cluster", "status", "--on", lab.url]);
        expect(text.stdout).toMatch(/w1 .*lost/);

        // Another worker takes them over: the lost one is no longer listed with them.
        await lab.worker("w2", ["--agents", "long", "--max-parallel", "4"]);
        await eventually(
          () => ids.every((id) => readState(lab.submitter, id).remote?.worker?.id === "w2"),
          3 * MINUTE,
          () =>
            `the tasks to run on w2: ${ids.map((id) => JSON.stringify(readState(lab.submitter, id).remote))}\n${logs()}`,
        );
        let after: ClusterStatus | undefined;
        const takenBy = Date.now() + MINUTE;
        while (Date.now() < takenBy) {
          after = await statusNow();
          if (ids.every((id) => after!.workers.find((w) => w.id === "w2")?.running.includes(id))) break;
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
        expect(after!.workers.find((w) => w.id === "w2")!.running.sort()).toEqual([...ids].sort());
        const gone = after!.workers.find((w) => w.id === "w1");
        if (gone) expect(gone).toMatchObject({ condition: "lost", running: [] });
        expect(after!.tasks_per_worker.w1 ?? []).toEqual([]);

        // Reaped once silent for twelve periods and holding nothing (a live worker sweeps once a minute).
        const reapBy = Date.now() + 3 * MINUTE;
        while (Date.now() < reapBy && (await statusNow()).workers.some((w) => w.id === "w1"))
          await new Promise((resolve) => setTimeout(resolve, 2_000));
        expect((await statusNow()).workers.map((w) => w.id)).toEqual(["w2"]);

        // Its clone still has the worktrees and branches of the attempts it lost; restarted there, it
        // sweeps them before it takes any task (they are w2's tasks now).
        const worktrees = () =>
          git(w1.clone, "worktree", "list", "--porcelain")
            .split("\n")
            .filter((line) => line.startsWith("worktree "));
        const branches = () =>
          git(w1.clone, "branch", "--format=%(refname:short)").split("\n").filter(Boolean);
        expect(worktrees()).toHaveLength(1 + ids.length);
        await w1.start();
        expect(worktrees()).toHaveLength(1);
        expect(branches()).toEqual(["main"]);
      } finally {
        await cluster.close();
      }
    },
    10 * MINUTE,
  );
});
