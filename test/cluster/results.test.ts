import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseJsonOutput } from "../helpers/cli.js";
import {
  eventually,
  fixtureAgents,
  readState,
  requireNatsServer,
  type WorkerProcess,
} from "../helpers/cluster.js";
import { ClusterLab } from "../helpers/cluster-lab.js";
import { git } from "../helpers/repo.js";

const NATS_SERVER = requireNatsServer();
const MINUTE = 60_000;

// Result refs on the shared remote are pruned by workers after [cluster] keep_results, unless applied or
// pinned; start refs go once their task ended, whoever deletes them.
describe.skipIf(!NATS_SERVER)("refs/caesar/ on the shared remote", () => {
  let lab: ClusterLab;
  let worker: WorkerProcess;

  const caesar = (args: string[]) => lab.caesar(args);
  /** The remote's refs/caesar/*, by name. */
  const remoteRefs = () =>
    execFileSync("git", ["for-each-ref", "--format=%(refname)", "refs/caesar/"], {
      cwd: lab.remote,
      encoding: "utf8",
    })
      .split("\n")
      .filter(Boolean)
      .sort();
  /** A worker restarted prunes at once (as it does every hour). */
  const restartWorker = async () => {
    await worker.stop();
    await worker.start();
    await eventually(
      () => readFileSync(worker.logPath, "utf8").split("serving nap").length >= 2,
      MINUTE,
      () => readFileSync(worker.logPath, "utf8"),
    );
  };

  beforeAll(async () => {
    lab = await ClusterLab.start(NATS_SERVER!, {
      name: "results",
      config: (dir) =>
        ["[cluster]", 'keep_results = "1s"', "", fixtureAgents(join(dir, "runs.log"))].join("\n"),
    });
    worker = await lab.worker("w1", ["--agents", "nap"]);
  }, 2 * MINUTE);

  afterAll(() => lab?.stop(), 2 * MINUTE);

  it(
    "prunes a result older than keep_results, keeps one applied and one pinned until unpinned, and removes start refs of ended tasks",
    async () => {
      const ids: string[] = [];
      for (const n of [1, 2, 3]) {
        const sent = await caesar([
          "run",
          "--on",
          lab.url,
          "--agent",
          "nap",
          "--detach",
          "--json",
          `nap ${n}`,
        ]);
        expect(sent.code, sent.stderr).toBe(0);
        ids.push(parseJsonOutput<{ task_id: string }>(sent).task_id);
      }
      await eventually(
        () => ids.every((id) => readState(lab.submitter, id).phase === "finished"),
        3 * MINUTE,
        () => `every task to finish\n${readFileSync(worker.logPath, "utf8")}`,
      );
      const [applied, pinned, plain] = ids as [string, string, string];
      expect(ids.map((id) => readState(lab.submitter, id).outcome)).toEqual([
        "succeeded",
        "succeeded",
        "succeeded",
      ]);
      const apply = await caesar(["apply", applied]);
      expect(apply.code, apply.stderr).toBe(0);
      const pin = await caesar(["cluster", "pin", pinned, "--json"]);
      expect(pin.code, pin.stderr).toBe(0);
      expect(parseJsonOutput<{ ref: string }>(pin).ref).toBe(`refs/caesar/keep/${pinned}`);
      // As if a submitter never came back to delete it: a start ref of a task that ended.
      const plainResult = readState(lab.submitter, plain).result_commit!;
      git(lab.submitter, "push", "--quiet", "origin", `${plainResult}:refs/caesar/start/${plain}`);
      // A ref under refs/caesar/tasks/ that is no cluster task's: not caesar's to judge.
      git(lab.submitter, "push", "--quiet", "origin", `${plainResult}:refs/caesar/tasks/mine`);
      expect(remoteRefs()).toEqual(
        [
          `refs/caesar/keep/${applied}`,
          `refs/caesar/keep/${pinned}`,
          `refs/caesar/start/${plain}`,
          ...ids.map((id) => `refs/caesar/tasks/${id}`),
          "refs/caesar/tasks/mine",
        ].sort(),
      );

      // keep_results is 1 s: let it pass since the last task ended (the server's clock is this machine's), or a
      // quick machine restarts the worker before any result is old enough to go.
      const lastEnd = Math.max(...ids.map((id) => Date.parse(readState(lab.submitter, id).finished_at!)));
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, lastEnd + 2_000 - Date.now())));
      await restartWorker();
      expect(readFileSync(worker.logPath, "utf8")).toContain("pruned 1 result ref(s) and 1 start ref(s)");
      expect(remoteRefs()).toEqual(
        [
          `refs/caesar/keep/${applied}`,
          `refs/caesar/keep/${pinned}`,
          `refs/caesar/tasks/${applied}`,
          `refs/caesar/tasks/${pinned}`,
          "refs/caesar/tasks/mine",
        ].sort(),
      );
      // Still there for its submitter: diff reads the result from the clone the relay fetched it into.
      expect((await caesar(["diff", plain])).code).toBe(0);

      const unpin = await caesar(["cluster", "unpin", pinned]);
      expect(unpin.code, unpin.stderr).toBe(0);
      await restartWorker();
      expect(remoteRefs()).toEqual(
        [`refs/caesar/keep/${applied}`, `refs/caesar/tasks/${applied}`, "refs/caesar/tasks/mine"].sort(),
      );

      // A task that ran here has nothing to pin on a cluster's remote.
      const local = await caesar(["run", "--on", "local", "--agent", "nap", "--json", "here"]);
      const localId = parseJsonOutput<{ task_id: string }>(local).task_id;
      const refused = await caesar(["cluster", "pin", localId, "--json"]);
      expect(refused.code).toBe(1);
      expect(parseJsonOutput<{ error: { code: string } }>(refused).error.code).toBe("not_remote");
    },
    8 * MINUTE,
  );
});
