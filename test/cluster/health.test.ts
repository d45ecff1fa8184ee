import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClusterStatus } from "../../src/cluster/status.js";
import { CAESAR_BIN, parseJsonOutput } from "../helpers/cli.js";
import {
  cloneOf,
  completedRuns,
  eventually,
  fixtureAgents,
  readState,
  requireNatsServer,
} from "../helpers/cluster.js";
import { ClusterLab } from "../helpers/cluster-lab.js";
import { git } from "../helpers/repo.js";

const NATS_SERVER = requireNatsServer();
const MINUTE = 60_000;

describe.skipIf(!NATS_SERVER)("a worker's own health", () => {
  let lab: ClusterLab;
  let runs: string;

  const caesar = (args: string[]) => lab.caesar(args);
  const logs = () => lab.logs();

  /** `caesar worker` in `clone`, expected to refuse to start: its exit code and stderr. */
  const refusedWorker = (clone: string, args: string[]) => {
    const workerHome = join(lab.dir, `home-${args.join("-").replace(/[^a-z0-9]/gi, "")}`);
    mkdirSync(workerHome, { recursive: true });
    return spawnSync(process.execPath, [CAESAR_BIN, "worker", "--on", lab.url, "--agents", "nap", ...args], {
      cwd: clone,
      env: {
        ...process.env,
        HOME: workerHome,
        XDG_CONFIG_HOME: join(workerHome, ".config"),
        NO_COLOR: "1",
      },
      encoding: "utf8",
      timeout: 2 * MINUTE,
    });
  };

  beforeAll(async () => {
    lab = await ClusterLab.start(NATS_SERVER!, {
      name: "health",
      config: (dir) => {
        runs = join(dir, "runs.log");
        return ["[cluster]", 'heartbeat_timeout = "6s"', "", fixtureAgents(runs)].join("\n");
      },
    });
  }, 2 * MINUTE);

  afterAll(() => lab?.stop(), 2 * MINUTE);

  it("refuses to start, saying why, when its clone cannot fetch from or push to its remote", () => {
    const noRemote = cloneOf(lab.remote, join(lab.dir, "clone-no-remote"));
    git(noRemote, "remote", "set-url", "origin", join(lab.dir, "nowhere.git"));
    const unreachable = refusedWorker(noRemote, []);
    expect(unreachable.status, unreachable.stderr).toBe(1);
    expect(unreachable.stderr).toContain("failed its start-up check");
    expect(unreachable.stderr).toMatch(/cannot fetch from the git remote origin/);

    // A remote that refuses every push (its hook says no): reading works, writing does not.
    const readOnly = join(lab.dir, "read-only.git");
    execFileSync("git", ["clone", "--quiet", "--bare", lab.remote, readOnly]);
    const hook = join(readOnly, "hooks", "pre-receive");
    writeFileSync(hook, "#!/bin/sh\necho 'this remote is read-only' >&2\nexit 1\n");
    chmodSync(hook, 0o755);
    const clone = cloneOf(lab.remote, join(lab.dir, "clone-read-only"));
    const refused = refusedWorker(clone, ["--remote", readOnly, "--json"]);
    expect(refused.status, refused.stderr).toBe(1);
    const error = JSON.parse(refused.stdout) as { error: { code: string; detail: string } };
    expect(error.error.code).toBe("worker_unhealthy");
    expect(error.error.detail).toMatch(/cannot push to the git remote .*read-only/);
  });

  it(
    "hands back the tasks of a worker whose remote broke, which quarantines itself; every task succeeds elsewhere",
    async () => {
      const broken = await lab.worker("broken", ["--agents", "nap", "--max-parallel", "4"]);
      // It passed its start-up check; now its clone loses its remote.
      git(broken.clone, "remote", "set-url", "origin", join(lab.dir, "gone.git"));
      const ids: string[] = [];
      for (let n = 0; n < 12; n++) {
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
      // Alone, it takes tasks and cannot prepare them: it hands them back, then quarantines itself.
      await eventually(
        () => readFileSync(broken.logPath, "utf8").includes("quarantined itself"),
        2 * MINUTE,
        () => `the broken worker to quarantine itself\n${logs()}`,
      );
      const status = parseJsonOutput<ClusterStatus>(
        await caesar(["cluster", "status", "--on", lab.url, "--json"]),
      );
      const view = status.workers.find((w) => w.id === "broken");
      expect(view?.condition).toBe("quarantined");
      expect(view?.quarantined?.reason).toMatch(/3 tasks in a row could not be prepared here/);
      const text = await caesar(["cluster", "status", "--on", lab.url]);
      expect(text.stdout).toMatch(/broken quarantined itself/);

      for (const name of ["w1", "w2"]) {
        await lab.worker(name, ["--agents", "nap", "--max-parallel", "4"]);
      }
      await eventually(
        () => ids.every((id) => readState(lab.submitter, id).phase === "finished"),
        4 * MINUTE,
        () =>
          `every task to finish: ${ids.map((id) => readState(lab.submitter, id).phase).join(",")}\n${logs()}`,
      );
      const states = ids.map((id) => readState(lab.submitter, id));
      expect(states.map((s) => `${s.outcome}/${s.error?.code ?? ""}`)).toEqual(ids.map(() => "succeeded/"));
      expect(states.every((s) => s.remote?.worker?.id === "w1" || s.remote?.worker?.id === "w2")).toBe(true);
      expect(states.every((s) => (s.remote?.lost ?? []).length === 0)).toBe(true);
      const completed = completedRuns(runs);
      for (const id of ids) expect(completed.get(id), id).toHaveLength(1);
      expect(readFileSync(broken.logPath, "utf8")).toContain("handed back to the queue");
    },
    8 * MINUTE,
  );
});
