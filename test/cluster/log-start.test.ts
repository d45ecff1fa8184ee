import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { DeliverPolicy } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { logStartOf } from "../../src/cluster/relay/progress.js";
import { relayPaths } from "../../src/engine/conductor/relay.js";
import { taskDirOf, updateState } from "../../src/engine/store/task-store.js";
import { acquireLock, type HeldLock } from "../../src/support/lock.js";
import { type CliResult, parseJsonOutput, runCaesar } from "../helpers/cli.js";
import {
  cloneOf,
  completedRuns,
  eventually,
  fixtureAgents,
  freePort,
  makeSharedRemote,
  NatsServer,
  readState,
  requireNatsServer,
  tempDir,
  type WorkerProcess,
  workerIn,
} from "../helpers/cluster.js";

const NATS_SERVER = requireNatsServer();

const MINUTE = 60_000;
/** A creation time a submitter whose clock runs far ahead of the NATS server's would write. */
const FAR_AHEAD = "2099-01-01T00:00:00.000Z";

interface EventLine {
  type: string;
  at: string;
  message?: string;
}

function eventsOf(root: string, id: string): EventLine[] {
  const path = join(root, ".caesar", "tasks", id, "events.jsonl");
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as EventLine);
}

function rawOf(root: string, id: string): string {
  const path = join(root, ".caesar", "tasks", id, "raw.log");
  return existsSync(path) ? readFileSync(path, "utf8") : "";
}

describe("the start of the relay's consumer of a task's log", () => {
  it("is after the last message applied, else after the sequence recorded when the task was sent", () => {
    expect(logStartOf({ log_seq: 0 }, { log_seq_before: 41 })).toEqual({
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: 42,
    });
    expect(logStartOf({ log_seq: 0 }, { log_seq_before: 0 })).toEqual({
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: 1,
    });
    expect(logStartOf({ log_seq: 97 }, { log_seq_before: 41 })).toEqual({
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: 98,
    });
  });

  it("is the start of the task's subjects for a state that never recorded it, and never a time", () => {
    expect(logStartOf({ log_seq: 0 }, { log_seq_before: null })).toEqual({
      deliver_policy: DeliverPolicy.All,
    });
    expect(logStartOf({ log_seq: 5 }, { log_seq_before: null })).toEqual({
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: 6,
    });
  });
});

describe.skipIf(!NATS_SERVER)("where the relay starts reading a task's log (no clock involved)", () => {
  let lab: string;
  let server: NatsServer;
  let submitter: string;
  let submitterHome: string;
  let runs: string;
  let worker: WorkerProcess;

  const caesar = (args: string[]): Promise<CliResult> =>
    runCaesar(args, {
      cwd: submitter,
      env: { HOME: submitterHome, XDG_CONFIG_HOME: join(submitterHome, ".config") },
      timeoutMs: 2 * MINUTE,
    });

  async function submit(objective: string): Promise<string> {
    const result = await caesar([
      "run",
      "--on",
      server.url,
      "--agent",
      "nap",
      "--detach",
      "--json",
      objective,
    ]);
    expect(result.code, result.stderr + result.stdout).toBe(0);
    return parseJsonOutput<{ task_id: string }>(result).task_id;
  }

  function logs(): string {
    const relayLog = relayPaths(submitter).log;
    return [
      `--- worker\n${existsSync(worker.logPath) ? readFileSync(worker.logPath, "utf8").slice(-3000) : ""}`,
      `--- relay\n${existsSync(relayLog) ? readFileSync(relayLog, "utf8").slice(-3000) : ""}`,
    ].join("\n");
  }

  async function finished(id: string) {
    await eventually(
      () => readState(submitter, id).phase === "finished",
      3 * MINUTE,
      () => `${id} to finish: ${JSON.stringify(readState(submitter, id))}\n${logs()}`,
    );
    return readState(submitter, id);
  }

  beforeAll(async () => {
    lab = tempDir("caesar-log-start-");
    server = new NatsServer(NATS_SERVER!, await freePort(), lab);
    await server.start();
    runs = join(lab, "runs.log");
    const remote = makeSharedRemote(lab, fixtureAgents(runs));
    submitter = cloneOf(remote, join(lab, "submitter"));
    submitterHome = join(lab, "submitter-home");
    mkdirSync(submitterHome, { recursive: true });
    worker = workerIn(lab, remote, "w1", ["--on", server.url, "--agents", "nap"]);
    await worker.start();
  }, 3 * MINUTE);

  afterAll(async () => {
    await worker?.stop();
    const owner = relayPaths(submitter).owner;
    if (existsSync(owner)) {
      const { pid } = JSON.parse(readFileSync(owner, "utf8")) as { pid: number };
      if (pid !== process.pid) {
        try {
          process.kill(pid, "SIGTERM");
        } catch {
          // already gone
        }
      }
    }
    await server?.stop();
  }, 2 * MINUTE);

  it(
    "brings a task back whole when its submitter's clock runs far ahead of the server's, and an older state without the recorded start too",
    async () => {
      // A first task, so the log stream holds other tasks' messages before ours.
      const first = await submit("a first nap");
      expect((await finished(first)).outcome).toBe("succeeded");
      const firstRecorded = readState(submitter, first).remote as { log_seq_before?: number | null };
      expect(firstRecorded.log_seq_before).toBe(0);

      // Hold the relay's lock, as a running relay would: the front end starts none, so nothing reads the
      // tasks' logs until the test lets go — after their states were rewritten below.
      const held: HeldLock = await acquireLock(relayPaths(submitter).lock, { timeoutMs: 60_000 });
      let ahead: string;
      let older: string;
      try {
        ahead = await submit("a nap sent by a machine whose clock runs ahead");
        older = await submit("a nap sent before caesar recorded where its log starts");
        // Each was sent after the first task's log: its log starts past it, whatever any clock says.
        for (const id of [ahead, older]) {
          const recorded = readState(submitter, id).remote as { log_seq_before?: number | null };
          expect(recorded.log_seq_before, id).toBeGreaterThan(0);
        }
        // Both run to the end on the worker while no relay follows them.
        await eventually(
          () => completedRuns(runs).has(ahead) && completedRuns(runs).has(older),
          3 * MINUTE,
          () => `both to run on the worker\n${logs()}`,
        );
        // The submitter's clock, far ahead of the server's, stamped their creation.
        await updateState(taskDirOf(submitter, ahead), (state) => ({ ...state, created_at: FAR_AHEAD }));
        // A state written before the field existed: no log_seq_before at all.
        await updateState(taskDirOf(submitter, older), (state) => {
          const { log_seq_before: _dropped, ...remote } = state.remote!;
          return { ...state, created_at: FAR_AHEAD, remote: remote as typeof state.remote };
        });
        expect(readFileSync(join(submitter, ".caesar", "tasks", older, "state.json"), "utf8")).not.toContain(
          "log_seq_before",
        );
      } finally {
        held.release();
      }

      // Any command that reads a remote task starts the relay again.
      const ps = await caesar(["ps", "--json"]);
      expect(ps.code, ps.stderr + ps.stdout).toBe(0);
      for (const id of [ahead, older]) {
        const state = await finished(id);
        expect(`${state.outcome}/${state.report_status}`, id).toBe("succeeded/success");
        // Every event the worker wrote arrived (its own `finished` aside: the relay writes the one here),
        // at the times the worker stamped them, and so did its raw output.
        const onWorker = eventsOf(worker.clone, id).filter((event) => event.type !== "finished");
        expect(onWorker.length, id).toBeGreaterThan(0);
        const here = eventsOf(submitter, id);
        for (const event of onWorker) {
          expect(
            here.some((mine) => mine.type === event.type && mine.at === event.at),
            `${id}: ${JSON.stringify(event)} in ${JSON.stringify(here)}`,
          ).toBe(true);
        }
        expect(here.filter((event) => event.type === "finished")).toHaveLength(1);
        expect(rawOf(worker.clone, id)).toContain("napped in");
        expect(rawOf(submitter, id), id).toBe(rawOf(worker.clone, id));
      }
      expect(readFileSync(relayPaths(submitter).log, "utf8")).not.toContain("the log stops at");
    },
    10 * MINUTE,
  );
});
