import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseJsonOutput } from "../helpers/cli.js";
import { eventually, requireNatsServer } from "../helpers/cluster.js";
import { ClusterLab } from "../helpers/cluster-lab.js";
import { FIXTURE_BIN } from "../helpers/repo.js";

const NATS_SERVER = requireNatsServer();
const MINUTE = 60_000;

interface Attempt {
  attempt: number;
  worker: string;
  started_at: string;
  ended_at: string | null;
  outcome: string;
  reason: string | null;
}
interface RetriedState {
  phase: string;
  outcome: string | null;
  error: { code: string; message: string } | null;
  remote: { attempts: Attempt[] } | null;
}

describe.skipIf(!NATS_SERVER)("[cluster] retry: transient failures run again", () => {
  let lab: ClusterLab;
  let flaky: string;

  const caesar = (args: string[]) => lab.caesar(args);
  const stateOf = (id: string) =>
    JSON.parse(
      readFileSync(join(lab.submitter, ".caesar", "tasks", id, "state.json"), "utf8"),
    ) as RetriedState;
  /** What the agent's runs for a task were, in order ("failed", "succeeded"). */
  const runsOf = (id: string) => readFileSync(join(flaky, id), "utf8").trim().split("\n");
  const submit = async (agent: string) => {
    const sent = await caesar(["run", "--on", lab.url, "--agent", agent, "--detach", "--json", "go"]);
    expect(sent.code, sent.stderr).toBe(0);
    return parseJsonOutput<{ task_id: string }>(sent).task_id;
  };
  const finished = async (id: string) => {
    await eventually(
      () => stateOf(id).phase === "finished",
      4 * MINUTE,
      () => `${id} to finish: ${JSON.stringify(stateOf(id))}\n${lab.logs()}`,
    );
    return stateOf(id);
  };

  beforeAll(async () => {
    lab = await ClusterLab.start(NATS_SERVER!, {
      name: "retry",
      config: (dir) => {
        flaky = join(dir, "flaky");
        mkdirSync(flaky, { recursive: true });
        const agent = (id: string, env: string) =>
          [
            "[[agent]]",
            `id = "${id}"`,
            'protocol = "acp"',
            `bin = "${join(FIXTURE_BIN, "flaky-acp.sh")}"`,
            `env = { FLAKY_DIR = "${flaky}"${env} }`,
            "",
          ].join("\n");
        return [
          "[cluster]",
          'heartbeat_timeout = "6s"',
          'retry = { attempts = 2, backoff = "1s" }',
          "",
          agent("flaky", ""),
          agent("broken", ', FLAKY_ALWAYS = "1", FLAKY_ERROR = "the prompt is malformed"'),
          agent("down", ', FLAKY_ALWAYS = "1"'),
        ].join("\n");
      },
    });
    for (const name of ["w1", "w2"]) await lab.worker(name, ["--agents", "flaky,broken,down"]);
  }, 3 * MINUTE);

  afterAll(() => lab?.stop(), 2 * MINUTE);

  it(
    "runs a task whose provider failed with a 503 again, and it succeeds once, its attempts recorded",
    async () => {
      const id = await submit("flaky");
      const state = await finished(id);
      expect(`${state.outcome}/${state.error?.code ?? ""}`, lab.logs()).toBe("succeeded/");
      expect(runsOf(id)).toEqual(["failed", "succeeded"]);
      const attempts = state.remote?.attempts ?? [];
      expect(attempts.map((a) => `${a.attempt}:${a.outcome}`)).toEqual(["1:retried", "2:succeeded"]);
      expect(attempts[0]?.reason).toMatch(/^model_error: .*503 Service Unavailable/);
      expect(attempts.every((a) => a.ended_at !== null && ["w1", "w2"].includes(a.worker))).toBe(true);
      // `caesar status` shows the history; the events say why the second attempt ran.
      const status = await caesar(["status", id]);
      expect(status.stdout).toMatch(/attempt 1\s+w[12] .*retried: model_error/);
      expect(status.stdout).toMatch(/attempt 2\s+w[12] .*succeeded/);
      const events = readFileSync(join(lab.submitter, ".caesar", "tasks", id, "events.jsonl"), "utf8");
      expect(events).toContain("attempt 1 failed transiently (model_error");
      // `caesar cluster status` lists it among the tasks that ended in the last hour, with its attempts.
      const pool = parseJsonOutput<{ tasks: { id: string; state: string; attempts: Attempt[] }[] }>(
        await caesar(["cluster", "status", "--on", lab.url, "--json"]),
      );
      const listed = pool.tasks.find((task) => task.id === id);
      expect(listed?.state).toBe("finished");
      expect(listed?.attempts.map((a) => a.outcome)).toEqual(["retried", "succeeded"]);
      const text = await caesar(["cluster", "status", "--on", lab.url]);
      expect(text.stdout).toMatch(new RegExp(`${id} {2}succeeded\n {4}1 {2}w[12] .* retried: model_error`));
    },
    6 * MINUTE,
  );

  it(
    "does not run a task again when its failure is not transient",
    async () => {
      const id = await submit("broken");
      const state = await finished(id);
      expect(state.outcome).toBe("failed");
      expect(state.error?.code).not.toMatch(/^(rate_limited|model_unreachable|model_error)$/);
      expect(state.error?.message).toContain("the prompt is malformed");
      expect(runsOf(id)).toEqual(["failed"]);
      expect(state.remote?.attempts.map((a) => a.outcome)).toEqual(["failed"]);
    },
    6 * MINUTE,
  );

  it(
    "finishes failed after the last attempt, saying how many were made and why each failed",
    async () => {
      const id = await submit("down");
      const state = await finished(id);
      expect(state.outcome).toBe("failed");
      expect(state.error?.code).toBe("model_error");
      expect(state.error?.message).toMatch(
        /^Failed after 2 attempts \(attempt 1 on w[12]: model_error: .*503/,
      );
      expect(runsOf(id)).toEqual(["failed", "failed"]);
      expect(state.remote?.attempts.map((a) => a.outcome)).toEqual(["retried", "failed"]);
    },
    6 * MINUTE,
  );

  it(
    "shows a task waiting for its next attempt as queued, and a cancel then ends it at once: nothing runs again",
    async () => {
      // This submitter waits ten minutes before a retry: the task sits in the queue, released.
      const local = join(lab.submitter, ".caesar", "config.local.toml");
      writeFileSync(local, '[cluster]\nretry = { attempts = 2, backoff = "10m" }\n');
      try {
        const id = await submit("flaky");
        await eventually(
          () => stateOf(id).phase === "queued" && stateOf(id).remote?.attempts[0]?.outcome === "retried",
          3 * MINUTE,
          () => `${id} to wait for its second attempt: ${JSON.stringify(stateOf(id))}\n${lab.logs()}`,
        );
        const cancelled = await caesar(["cancel", id, "--json"]);
        expect(cancelled.code, cancelled.stderr).toBe(0);
        const state = await finished(id);
        expect(state.outcome).toBe("cancelled");
        expect(state.error?.code).toBe("cancelled_in_queue");
        expect(runsOf(id)).toEqual(["failed"]);
      } finally {
        rmSync(local, { force: true });
      }
    },
    6 * MINUTE,
  );
});
