import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer } from "../../src/api/server.js";
import { readClaim } from "../../src/engine/store/race-record.js";
import { lockHolder } from "../../src/support/lock.js";
import { isProcessAlive } from "../../src/support/process.js";
import { CAESAR_BIN, type CliResult, parseJsonOutput, runCaesar } from "../helpers/cli.js";
import {
  cloneOf,
  completedRuns,
  eventually,
  fixtureAgents,
  freePort,
  makeSharedRemote,
  NatsServer,
  readState,
  readStates,
  requireNatsServer,
  tempDir,
  type WorkerProcess,
  workerIn,
} from "../helpers/cluster.js";
import { connectCaesar, dataOf } from "../helpers/mcp.js";
import { git } from "../helpers/repo.js";

const NATS_SERVER = requireNatsServer();

const MINUTE = 60_000;

describe.skipIf(!NATS_SERVER)("tasks on a pool of workers (NATS JetStream + a git remote)", () => {
  let lab: string;
  let server: NatsServer;
  let remote: string;
  let runs: string;
  let submitter: string;
  let submitterHome: string;
  const workers: WorkerProcess[] = [];

  const caesar = (args: string[], root = submitter, timeoutMs = 2 * MINUTE): Promise<CliResult> =>
    runCaesar(args, {
      cwd: root,
      env: { HOME: submitterHome, XDG_CONFIG_HOME: join(submitterHome, ".config") },
      timeoutMs,
    });

  async function submit(agent: string, objective: string, root = submitter): Promise<string> {
    const result = await caesar(
      ["run", "--on", server.url, "--agent", agent, "--detach", "--json", objective],
      root,
    );
    expect(result.code, result.stderr + result.stdout).toBe(0);
    return parseJsonOutput<{ task_id: string }>(result).task_id;
  }

  async function finished(id: string, root = submitter, timeoutMs = 3 * MINUTE) {
    await eventually(
      () => readState(root, id).phase === "finished",
      timeoutMs,
      () => `${id} to finish: ${JSON.stringify(readState(root, id))}\n${workerLogs()}`,
    );
    return readState(root, id);
  }

  async function runningOnAWorker(id: string, root = submitter) {
    await eventually(
      () => {
        const state = readState(root, id);
        return state.phase === "running" && state.remote?.worker !== null && state.remote?.agent_pid !== null;
      },
      2 * MINUTE,
      () => `${id} to run on a worker: ${JSON.stringify(readState(root, id))}\n${workerLogs()}`,
    );
    const state = readState(root, id);
    const worker = workers.find((w) => w.name === state.remote!.worker!.id);
    if (!worker) throw new Error(`no worker named ${state.remote!.worker!.id}`);
    return { state, worker };
  }

  function workerLogs(): string {
    return workers
      .map(
        (w) => `--- ${w.name}\n${existsSync(w.logPath) ? readFileSync(w.logPath, "utf8").slice(-3000) : ""}`,
      )
      .join("\n");
  }

  beforeAll(async () => {
    lab = tempDir("caesar-cluster-");
    server = new NatsServer(NATS_SERVER!, await freePort(), lab);
    await server.start();
    runs = join(lab, "runs.log");
    const config = [
      "[cluster]",
      'heartbeat_timeout = "6s"',
      "",
      "[policy]",
      "max_parallel = 16",
      "",
      fixtureAgents(runs),
      '[[agent]]\nid = "mid"',
      `bin = "${join(import.meta.dirname, "../fixtures/bin/napper.sh")}"`,
      `args = ["{{prompt}}"]\nenv = { NAP_S = "20", RUNS = "${runs}" }\n`,
      '[[agent]]\nid = "six"',
      `bin = "${join(import.meta.dirname, "../fixtures/bin/napper.sh")}"`,
      `args = ["{{prompt}}"]\nenv = { NAP_S = "6", RUNS = "${runs}" }\n`,
      // Installed on every machine, but no worker is asked to serve it.
      '[[agent]]\nid = "rare"',
      `bin = "${join(import.meta.dirname, "../fixtures/bin/napper.sh")}"`,
      `args = ["{{prompt}}"]\nenv = { NAP_S = "1", RUNS = "${runs}" }\n`,
      // An agent that delegates through caesar itself, from wherever it runs.
      '[[agent]]\nid = "delegator"',
      `bin = "${join(import.meta.dirname, "../fixtures/bin/delegator.mjs")}"`,
      `args = ["{{prompt}}"]\nenv = { CAESAR_BIN = "${CAESAR_BIN}" }\n`,
      // The race below asks for the check "true": a worker runs only checks its configuration lists.
      '[[role]]\nname = "checked"\nchecks = ["true"]\n',
      // Each delegation tree may start 2 tasks an hour: a parent and one child.
      "[risk_profiles.default]",
      'delegation_policy = { mode = "allow" }',
      "max_tasks_per_hour = 2",
    ].join("\n");
    remote = makeSharedRemote(lab, config);
    submitter = cloneOf(remote, join(lab, "submitter"));
    submitterHome = join(lab, "submitter-home");
    mkdirSync(submitterHome, { recursive: true });
    for (const n of [1, 2, 3]) {
      workers.push(
        workerIn(lab, remote, `w${n}`, [
          "--on",
          server.url,
          "--agents",
          "nap,long,mid,six,asker,delegator",
          "--max-parallel",
          "4",
        ]),
      );
    }
    await Promise.all(workers.map((worker) => worker.start()));
  }, 5 * MINUTE);

  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    // The submitters' relays exit on their own once idle; do not leave them for the next suite.
    for (const root of [
      submitter,
      join(lab, "submitter-fail"),
      join(lab, "submitter-mcp"),
      ...workers.map((w) => w.clone),
    ]) {
      const relay = lockHolder(join(root, ".caesar", "state", "relay.lock"));
      if (relay !== undefined && isProcessAlive(relay)) process.kill(relay.pid, "SIGTERM");
    }
    await server?.stop();
  }, 2 * MINUTE);

  it(
    "runs 30 tasks spread over three workers, each exactly once, and brings their changes back through git",
    async () => {
      const ids: string[] = [];
      for (let batch = 0; batch < 5; batch++) {
        ids.push(
          ...(await Promise.all(Array.from({ length: 6 }, (_, i) => submit("nap", `nap ${batch * 6 + i}`)))),
        );
      }
      // How many tasks each worker has at once, sampled from its clone's task store all along.
      const most = new Map<string, number>();
      const sampler = setInterval(() => {
        for (const worker of workers) {
          const active = readStates(worker.clone).filter((s) => s.phase !== "finished").length;
          most.set(worker.name, Math.max(most.get(worker.name) ?? 0, active));
        }
      }, 100);
      await eventually(
        () => ids.every((id) => readState(submitter, id).phase === "finished"),
        5 * MINUTE,
        () =>
          `all 30 to finish: ${ids.filter((id) => readState(submitter, id).phase !== "finished").join(", ")}\n${workerLogs()}`,
      );
      clearInterval(sampler);
      // Never more than its --max-parallel 4 at once.
      for (const worker of workers) expect(most.get(worker.name), worker.name).toBeLessThanOrEqual(4);
      const states = ids.map((id) => readState(submitter, id));
      expect(states.map((s) => `${s.outcome}/${s.report_status}`)).toEqual(
        ids.map(() => "succeeded/success"),
      );
      // Nothing lost, nothing run twice.
      const completed = completedRuns(runs);
      for (const id of ids) expect(completed.get(id), id).toHaveLength(1);
      // Spread: every worker ran some (each takes at most 4 at once, so no one can take all 30).
      const byWorker = new Map<string, number>();
      for (const state of states)
        byWorker.set(state.remote!.worker!.id, (byWorker.get(state.remote!.worker!.id) ?? 0) + 1);
      expect([...byWorker.keys()].sort()).toEqual(["w1", "w2", "w3"]);
      for (const id of ids)
        expect(completed.get(id)![0]).toContain(`clone-${readState(submitter, id).remote!.worker!.id}`);

      // The verified change comes back through the shared remote: diff and apply, as for a local task.
      const diff = parseJsonOutput<{ changes: { path: string }[]; origin: string }>(
        await caesar(["diff", ids[0]!, "--json"]),
      );
      expect(diff.changes.map((c) => c.path)).toEqual([`nap-${ids[0]}.txt`]);
      expect(diff.origin).toBe("result-commit");
      const applied = await caesar(["apply", ids[0]!, "--json"]);
      expect(applied.code, applied.stderr + applied.stdout).toBe(0);
      expect(readFileSync(join(submitter, `nap-${ids[0]}.txt`), "utf8")).toContain("napped");

      // The front ends show where each task ran.
      const ps = parseJsonOutput<{ id: string; worker: string | null }[]>(
        await caesar(["ps", "--json", "--all"]),
      );
      expect(ps.filter((row) => ids.includes(row.id)).every((row) => /^w[123]$/.test(row.worker ?? ""))).toBe(
        true,
      );
      const status = await caesar(["status", ids[1]!]);
      expect(status.stdout).toMatch(/worker\s+w[123]/);
      const cluster = parseJsonOutput<{ workers: { id: string; agents: string[]; max_parallel: number }[] }>(
        await caesar(["cluster", "status", "--on", server.url, "--json"]),
      );
      expect(cluster.workers.map((w) => w.id).sort()).toEqual(["w1", "w2", "w3"]);
      expect(cluster.workers[0]!.max_parallel).toBe(4);
    },
    10 * MINUTE,
  );

  it(
    "leaves a task for an agent no worker serves in the queue, shown by cluster status, and cancels it there",
    async () => {
      const id = await submit("rare", "a nap nobody takes");
      type Depth = { agent: string; waiting: number; running: number; served: boolean };
      const depthOf = async () =>
        parseJsonOutput<{ queue_depth: Depth[] }>(
          await caesar(["cluster", "status", "--on", server.url, "--json"]),
        ).queue_depth.find((row) => row.agent === "rare");
      await eventually(
        () => readState(submitter, id).remote !== null,
        2 * MINUTE,
        () => JSON.stringify(readState(submitter, id)),
      );
      // Every worker has the agent installed, none was asked to serve it: the task waits, untaken.
      await new Promise((resolve) => setTimeout(resolve, 8_000));
      expect(await depthOf()).toMatchObject({ waiting: 1, running: 0, served: false });
      expect(readState(submitter, id)).toMatchObject({ phase: "queued", remote: { worker: null } });
      const cancelled = await caesar(["cancel", id, "--json"]);
      expect(cancelled.code, cancelled.stderr + cancelled.stdout).toBe(0);
      const state = await finished(id);
      expect(state.outcome).toBe("cancelled");
      expect(state.error?.code).toBe("cancelled_in_queue");
      expect((await depthOf())?.waiting ?? 0).toBe(0);
      expect(completedRuns(runs).get(id)).toBeUndefined();
    },
    5 * MINUTE,
  );

  it(
    "cancels a remote task: the cancel reaches the agent's process group on its worker",
    async () => {
      const id = await submit("long", "a long nap to cancel");
      const { worker } = await runningOnAWorker(id);
      const local = JSON.parse(
        readFileSync(join(worker.clone, ".caesar", "tasks", id, "state.json"), "utf8"),
      ) as {
        agent_process: { pid: number };
      };
      expect(isProcessAlive(local.agent_process.pid)).toBe(true);
      const cancelled = await caesar(["cancel", id, "--json"]);
      expect(parseJsonOutput<{ cancelled: boolean; outcome: string }>(cancelled)).toMatchObject({
        cancelled: true,
        outcome: "cancelled",
      });
      expect(isProcessAlive(local.agent_process.pid)).toBe(false);
      expect(readState(submitter, id).outcome).toBe("cancelled");
      expect(completedRuns(runs).get(id)).toBeUndefined();
    },
    5 * MINUTE,
  );

  it(
    "carries a remote task's question to the submitter and the answer back",
    async () => {
      const id = await submit("asker", "ask which colour");
      // Followed live from the start, as for a local task.
      const following = caesar(["logs", id, "--follow", "--json"], submitter, 3 * MINUTE);
      const question = join(submitter, ".caesar", "tasks", id, "questions", "q_fixture01.json");
      await eventually(
        () => existsSync(question),
        2 * MINUTE,
        () => `the question of ${id}\n${workerLogs()}`,
      );
      const watched = await caesar(["watch", id, "--once", "--json"]);
      expect(watched.stdout).toContain("Which colour should the button be?");
      const answered = await caesar(["answer", id, "q_fixture01", "blue"]);
      expect(answered.code, answered.stderr).toBe(0);
      const state = await finished(id);
      expect(state.outcome).toBe("succeeded");
      const followed = (await following).stdout
        .trim()
        .split("\n")
        .map((line) => (JSON.parse(line) as { type: string }).type);
      expect(followed).toContain("question");
      expect(followed).toContain("answer");
      expect(followed.at(-1)).toBe("finished");
      const diff = parseJsonOutput<{ patch: string }>(await caesar(["diff", id, "--json"]));
      expect(diff.patch).toContain("+blue");
      // The answer event came back from the worker: one, in order after the question.
      const types = readFileSync(join(submitter, ".caesar", "tasks", id, "events.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((line) => (JSON.parse(line) as { type: string }).type);
      expect(types.filter((t) => t === "question")).toHaveLength(1);
      expect(types.filter((t) => t === "answer")).toHaveLength(1);
      expect(types.indexOf("answer")).toBeGreaterThan(types.indexOf("question"));
      expect(types.at(-1)).toBe("finished");
    },
    5 * MINUTE,
  );

  it(
    "re-runs a task elsewhere when its worker is killed (kill -9), and it completes once",
    async () => {
      const id = await submit("mid", "a nap its worker will not see the end of");
      const { worker } = await runningOnAWorker(id);
      worker.kill9();
      // Restarted as systemd would: it stops the agent its previous life left behind.
      await worker.start();
      const state = await finished(id);
      expect(state.outcome).toBe("succeeded");
      expect(state.remote!.attempt).toBe(2);
      expect(state.remote!.lost.map((l) => l.worker)).toEqual([worker.name]);
      expect(completedRuns(runs).get(id)).toHaveLength(1);
      const events = readFileSync(join(submitter, ".caesar", "tasks", id, "events.jsonl"), "utf8");
      expect(events).toContain("the previous worker was lost");
      expect(
        events
          .trim()
          .split("\n")
          .filter((line) => line.includes('"type":"finished"')),
      ).toHaveLength(1);
    },
    6 * MINUTE,
  );

  it(
    "fences a worker that was given up on and comes back (a partition, a stopped process): it publishes nothing",
    async () => {
      const id = await submit("mid", "a nap whose first worker freezes");
      const { state: running, worker } = await runningOnAWorker(id);
      const agentPid = running.remote!.agent_pid!;
      // The worker and its agent freeze: no heartbeat, as if its machine were cut off.
      process.kill(worker.pid!, "SIGSTOP");
      process.kill(-agentPid, "SIGSTOP");
      try {
        const state = await finished(id);
        expect(state.outcome).toBe("succeeded");
        expect(state.remote!.attempt).toBe(2);
        expect(state.remote!.lost.map((l) => l.worker)).toEqual([worker.name]);
        expect(state.remote!.worker!.id).not.toBe(worker.name);
      } finally {
        process.kill(worker.pid!, "SIGCONT");
      }
      const result = git(remote, "rev-parse", `refs/caesar/tasks/${id}`);
      // Back, it finds its claim taken over, stops its (still frozen) agent, and publishes nothing.
      await eventually(
        () => readFileSync(worker.logPath, "utf8").includes(`${id}: another worker took the task over`),
        2 * MINUTE,
        () => `${worker.name} to see it lost ${id}\n${workerLogs()}`,
      );
      await eventually(
        () => !isProcessAlive(agentPid),
        MINUTE,
        () => `the frozen agent ${agentPid} to be ended`,
      );
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect(git(remote, "rev-parse", `refs/caesar/tasks/${id}`)).toBe(result);
      expect(readState(submitter, id)).toMatchObject({ outcome: "succeeded", result_commit: result });
      expect(completedRuns(runs).get(id)).toHaveLength(1);
      const events = readFileSync(join(submitter, ".caesar", "tasks", id, "events.jsonl"), "utf8");
      expect(events.split("\n").filter((line) => line.includes('"type":"finished"'))).toHaveLength(1);
    },
    6 * MINUTE,
  );

  it(
    "loses nothing when the NATS server restarts mid-run",
    async () => {
      const ids = await Promise.all(
        Array.from({ length: 6 }, (_, i) => submit("six", `six-second nap ${i}`)),
      );
      await runningOnAWorker(ids[0]!);
      await server.restart(1_500);
      for (const id of ids) await finished(id);
      const completed = completedRuns(runs);
      for (const id of ids) {
        const state = readState(submitter, id);
        expect(`${state.outcome}/${state.report_status}`, id).toBe("succeeded/success");
        expect(completed.get(id), id).toHaveLength(1);
        const dir = join(submitter, ".caesar", "tasks", id);
        const events = readFileSync(join(dir, "events.jsonl"), "utf8")
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line) as { type: string; message?: string });
        const types = events.map((event) => event.type);
        // The run's own events from its start. On a loaded machine a worker may miss its heartbeats
        // through the restart (heartbeat_timeout is 6 s here) and another take the task over: then the
        // relay's notice of it comes first; the agent still completes once, and the task finishes once.
        const started = types.indexOf("started");
        expect(started, `${id}: ${JSON.stringify(events)}`).toBeGreaterThanOrEqual(0);
        for (const before of events.slice(0, started))
          expect(before.message, `${id}: ${JSON.stringify(events)}`).toMatch(/the previous worker was lost$/);
        expect(
          types.filter((t) => t === "finished"),
          id,
        ).toHaveLength(1);
        expect(readFileSync(join(dir, "raw.log"), "utf8"), id).toContain("napped in");
      }
    },
    6 * MINUTE,
  );

  it(
    'finishes a task failed, naming the lost worker, under [cluster] on_worker_loss = "fail"',
    async () => {
      const strict = cloneOf(remote, join(lab, "submitter-fail"));
      writeFileSync(join(strict, ".caesar", "config.local.toml"), '[cluster]\non_worker_loss = "fail"\n');
      const id = await submit("mid", "a nap not to be run twice", strict);
      const { worker } = await runningOnAWorker(id, strict);
      worker.kill9();
      await worker.start();
      const state = await finished(id, strict);
      expect(state.outcome).toBe("failed");
      expect(state.error?.code).toBe("worker_lost");
      expect(state.error?.message).toContain(worker.name);
      expect(state.error?.message).toContain('on_worker_loss = "fail"');
      expect(completedRuns(runs).get(id)).toBeUndefined();
      // Nothing anywhere is left running.
      for (const root of [submitter, strict])
        expect(readStates(root).filter((s) => s.phase !== "finished")).toEqual([]);
    },
    6 * MINUTE,
  );

  it(
    "governs a delegation tree across machines: a child of a remote task runs in the cluster, one level deeper, within the tree's budget",
    async () => {
      const objective = JSON.stringify({
        name: "parent",
        calls: [
          { agent: "nap", objective: "first child" },
          { agent: "nap", objective: "second child" },
        ],
      });
      const id = await submit("delegator", objective);
      const state = await finished(id, submitter, 5 * MINUTE);
      expect(state.outcome).toBe("succeeded");
      const report = JSON.parse(readFileSync(join(submitter, ".caesar", "tasks", id, "state.json"), "utf8"))
        .report as {
        details: string;
      };
      const [first, second] = JSON.parse(report.details) as {
        exit: number;
        task_id: string | null;
        report_status: string | null;
        error: { code: string } | null;
      }[];
      // The parent and its first child spend the tree's two tasks an hour, wherever they run…
      expect(first).toMatchObject({ exit: 0, report_status: "success" });
      // …so the second child is refused before anything exists, by the ledger the cluster keeps.
      expect(second?.exit).toBe(1);
      expect(second?.error?.code).toBe("budget_tasks");
      // The child was sent by the parent's worker to the cluster, one level deeper.
      const parentWorker = workers.find((w) => w.name === state.remote!.worker!.id)!;
      const child = JSON.parse(
        readFileSync(join(parentWorker.clone, ".caesar", "tasks", first!.task_id!, "state.json"), "utf8"),
      ) as { depth: number; parent_id: string; remote: { worker: { id: string } } | null };
      expect(child).toMatchObject({ depth: 2, parent_id: id });
      expect(child.remote?.worker.id).toMatch(/^w[123]$/);
    },
    8 * MINUTE,
  );

  it(
    "cancels a remote task's sub-tasks with it: a child it started in the cluster is cancelled, not left to run",
    async () => {
      const objective = JSON.stringify({
        name: "parent of a long child",
        calls: [{ agent: "long", objective: "a long child, cancelled with its parent" }],
      });
      const id = await submit("delegator", objective);
      const { worker } = await runningOnAWorker(id);
      // The child is recorded in the parent's worker clone, and runs on some worker of the cluster.
      const childOf = () => readStates(worker.clone).find((state) => state.parent_id === id);
      await eventually(
        () => Boolean(childOf()?.remote?.agent_pid),
        2 * MINUTE,
        () => `a child of ${id} to run: ${JSON.stringify(childOf())}\n${workerLogs()}`,
      );
      const child = childOf()!;
      const cancelled = await caesar(["cancel", id, "--json"]);
      expect(parseJsonOutput<{ cancelled: boolean }>(cancelled).cancelled).toBe(true);
      // The child naps 60 s: without the cascade it would end `succeeded` after that.
      await eventually(
        () => readState(worker.clone, child.id).phase === "finished",
        50_000,
        () => `${child.id} to end with its parent: ${JSON.stringify(readState(worker.clone, child.id))}`,
      );
      expect(readState(worker.clone, child.id).outcome).toBe("cancelled");
      expect(completedRuns(runs).get(child.id)).toBeUndefined();
    },
    6 * MINUTE,
  );

  it(
    "serves remote tasks to MCP clients and the dashboard like local ones, [cluster] nats making the cluster the default",
    async () => {
      const root = cloneOf(remote, join(lab, "submitter-mcp"));
      writeFileSync(join(root, ".caesar", "config.local.toml"), `[cluster]\nnats = "${server.url}"\n`);
      const mcp = await connectCaesar(["mcp", "serve"], {
        cwd: root,
        env: { HOME: submitterHome, XDG_CONFIG_HOME: join(submitterHome, ".config") },
      });
      let id: string;
      try {
        id = dataOf<{ task_id: string }>(
          await mcp.call("caesar_delegate", { objective: "nap for MCP", agent: "nap" }),
        ).task_id;
        const awaited = dataOf<{ status: string; results: { worker: string | null; outcome: string }[] }>(
          await mcp.call("caesar_await", { task_ids: [id], timeout_ms: 120_000 }),
        );
        expect(awaited.status).toBe("complete");
        expect(awaited.results[0]).toMatchObject({
          outcome: "succeeded",
          worker: expect.stringMatching(/^w[123]$/),
        });
        const diff = dataOf<{ changes: { path: string }[] }>(await mcp.call("caesar_diff", { task_id: id }));
        expect(diff.changes.map((c) => c.path)).toEqual([`nap-${id}.txt`]);
        // A fan-out goes to the cluster all at once.
        const fanout = dataOf<{ started: string[] }>(
          await mcp.call("caesar_fanout", {
            tasks: [
              { objective: "fan one", agent: "nap" },
              { objective: "fan two", agent: "nap" },
            ],
          }),
        );
        expect(fanout.started).toHaveLength(2);
        const fanned = dataOf<{ status: string; results: { worker: string | null; outcome: string }[] }>(
          await mcp.call("caesar_await", { task_ids: fanout.started, timeout_ms: 120_000 }),
        );
        expect(fanned.status).toBe("complete");
        for (const result of fanned.results)
          expect(result).toMatchObject({ outcome: "succeeded", worker: expect.stringMatching(/^w[123]$/) });
        // So does a race; its contenders' checks run on their workers, and the submitter's relay settles it.
        const race = dataOf<{
          race_id: string;
          status: string;
          task_ids: string[];
          decision: { state: string; winner: string | null };
        }>(
          await mcp.call("caesar_race", {
            objective: "nap in a race",
            agents: ["nap", "nap"],
            checks: ["true"],
            timeout_ms: 120_000,
          }),
        );
        expect(race.status).toBe("complete");
        expect(race.decision.state).toBe("decided");
        expect(race.task_ids).toContain(race.decision.winner);
        // Every contender is a remote task; the winner ran on a worker (a loser may have been settled —
        // cancelled — before any worker took it, on a loaded machine).
        for (const contender of race.task_ids) {
          const state = readStates(root).find((s) => s.id === contender);
          expect(state?.remote, contender).toBeTruthy();
          if (contender === race.decision.winner || state?.remote?.worker)
            expect(state?.remote?.worker?.id, contender).toMatch(/^w[123]$/);
        }
        const deadline = Date.now() + 60_000;
        while (!(await readClaim(root, race.race_id)) && Date.now() < deadline)
          await new Promise((resolve) => setTimeout(resolve, 250));
        expect((await readClaim(root, race.race_id))?.task_id).toBe(race.decision.winner);
      } finally {
        await mcp.close();
      }
      const api = await startServer({ root, version: "test", port: 0, writeAddress: false });
      try {
        const list = (await (await fetch(new URL("/api/tasks", api.url))).json()) as {
          tasks: { id: string; worker: string | null; changeStatus: string }[];
        };
        expect(list.tasks.find((t) => t.id === id)).toMatchObject({
          worker: expect.stringMatching(/^w[123]$/),
          changeStatus: "ready",
        });
        const diff = await fetch(new URL(`/api/tasks/${id}/diff`, api.url));
        expect(diff.status).toBe(200);
        expect(await diff.text()).toContain(`nap-${id}.txt`);
      } finally {
        await api.close();
      }
    },
    6 * MINUTE,
  );
});
