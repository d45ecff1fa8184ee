import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseJsonOutput } from "../helpers/cli.js";
import { eventually, fixtureAgents, readState, requireNatsServer } from "../helpers/cluster.js";
import { ClusterLab } from "../helpers/cluster-lab.js";
import { git } from "../helpers/repo.js";

const NATS_SERVER = requireNatsServer();
const MINUTE = 60_000;

describe.skipIf(!NATS_SERVER)("a task's starting point on the git remote", () => {
  let lab: ClusterLab | undefined;
  afterAll(() => lab?.stop(), 2 * MINUTE);

  it(
    "leaves the remote when the task is cancelled in the queue",
    async () => {
      lab = await ClusterLab.start(NATS_SERVER!, {
        name: "start-ref",
        config: (dir) => fixtureAgents(join(dir, "runs.log")),
      });
      const { remote, submitter } = lab;
      const caesar = (args: string[]) => lab!.caesar(args);
      // No worker serves it: it waits in the queue.
      const sent = await caesar([
        "run",
        "--on",
        lab.url,
        "--agent",
        "nap",
        "--detach",
        "--json",
        "a nap nobody takes",
      ]);
      expect(sent.code, sent.stderr).toBe(0);
      const id = parseJsonOutput<{ task_id: string }>(sent).task_id;
      const startRef = () => git(remote, "for-each-ref", `refs/caesar/start/${id}`);
      await eventually(
        () => readState(submitter, id).remote !== null && startRef() !== "",
        MINUTE,
        () => `${id} to be queued with its start ref: ${JSON.stringify(readState(submitter, id))}`,
      );
      const cancelled = await caesar(["cancel", id, "--json"]);
      expect(cancelled.code, cancelled.stderr + cancelled.stdout).toBe(0);
      await eventually(
        () => readState(submitter, id).phase === "finished",
        MINUTE,
        () => JSON.stringify(readState(submitter, id)),
      );
      expect(readState(submitter, id).error?.code).toBe("cancelled_in_queue");
      await eventually(
        () => startRef() === "",
        30_000,
        () => `refs/caesar/start/${id} to leave the remote`,
      );
    },
    4 * MINUTE,
  );
});
