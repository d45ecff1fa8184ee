import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { conduct } from "../../src/engine/conductor/conductor.js";
import { resolvePlan } from "../../src/engine/lifecycle/plan.js";
import { parseDelegationRequest } from "../../src/engine/lifecycle/request.js";
import { createTask } from "../../src/engine/lifecycle/start.js";
import { readState } from "../../src/engine/store/task-store.js";
import { makeRepo, writeConfig } from "../helpers/repo.js";

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("conduct() inside a long-lived process (as a cluster worker runs it)", () => {
  it("conducts several tasks at once, each with its own cancel, environment and log, touching no process-wide state", async () => {
    const root = makeRepo();
    writeConfig(root, "", ["env-dump", "hang"]);
    const plan = async (agent: string) =>
      (
        await resolvePlan(
          parseDelegationRequest({ objective: `${agent} task`, agent, mode: "read-only", on: "local" }),
          { root },
        )
      ).plan;
    const dumper = await createTask(await plan("env-dump"));
    const hanger = await createTask(await plan("hang"));
    const listeners = () =>
      ["SIGTERM", "SIGINT", "SIGHUP"].map((s) => process.listenerCount(s as NodeJS.Signals));
    const before = listeners();
    const logs: Record<string, string[]> = { dumper: [], hanger: [] };
    // Phase timings go to each task's own log.
    const traced = process.env.CAESAR_TRACE;
    process.env.CAESAR_TRACE = "1";
    const cancelHanger = new AbortController();
    const dumping = conduct(root, dumper.id, {
      signal: new AbortController().signal,
      env: { ...process.env, CAESAR_PROBE: "given to this task only" },
      log: (line) => logs.dumper!.push(line),
    });
    const hanging = conduct(root, hanger.id, {
      signal: cancelHanger.signal,
      log: (line) => logs.hanger!.push(line),
    });
    await waitUntil(async () => (await readState(hanger.dir)).phase === "running", 60_000);
    expect(listeners()).toEqual(before);
    await dumping;
    cancelHanger.abort();
    await hanging;
    if (traced === undefined) delete process.env.CAESAR_TRACE;
    else process.env.CAESAR_TRACE = traced;
    expect(listeners()).toEqual(before);
    for (const lines of Object.values(logs)) {
      expect(lines.filter((line) => line.includes("conductor: state recorded"))).toHaveLength(1);
      expect(lines.some((line) => line.includes("conductor: agent done"))).toBe(true);
    }

    const dumped = await readState(dumper.dir);
    expect(dumped).toMatchObject({ phase: "finished", outcome: "succeeded" });
    expect(readFileSync(join(dumper.dir, "env.txt"), "utf8")).toContain(
      "CAESAR_PROBE=given to this task only",
    );
    const hung = await readState(hanger.dir);
    expect(hung).toMatchObject({ phase: "finished", outcome: "cancelled" });
  }, 120_000);
});
