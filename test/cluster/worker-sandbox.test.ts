import { describe, expect, it } from "vitest";
import { workerSandbox } from "../../src/cluster/worker/worker-sandbox.js";
import { loadConfig } from "../../src/config/effective.js";
import type { TaskPlan } from "../../src/engine/store/task-plan.js";
import { probeBwrap } from "../../src/sandbox/bwrap.js";
import { makeRepo, writeConfig } from "../helpers/repo.js";

// A queue message's plan says what sandbox its sender decided; the worker's own [sandbox] decides instead.
describe("the sandbox of a task on a worker", () => {
  const sent = {
    agent: "reference",
    sandbox: { backend: null, detail: "turned off by the sender", cuts_network: false },
  };

  it("is the worker's: required where a sandbox runs gives bubblewrap, else the task is refused", async () => {
    const root = makeRepo();
    writeConfig(root, '[sandbox]\nmode = "required"\n');
    const decided = workerSandbox(sent as unknown as TaskPlan, await loadConfig(root), root, "w1");
    if (probeBwrap().available) {
      expect(decided).toMatchObject({ sandbox: { backend: "bwrap", cuts_network: true }, findings: [] });
    } else {
      expect(decided).toMatchObject({ refusal: { code: "sandbox_unavailable" } });
    }
  });

  it("off on the worker is off, whatever the sender says", async () => {
    const root = makeRepo();
    writeConfig(root, '[sandbox]\nmode = "off"\n');
    const decided = workerSandbox(
      { ...sent, sandbox: { backend: "bwrap", detail: "sender", cuts_network: true } } as unknown as TaskPlan,
      await loadConfig(root),
      root,
      "w1",
    );
    expect(decided).toMatchObject({ sandbox: { backend: null } });
  });
});
