import { describe, expect, it } from "vitest";
import { lazyDriver } from "../../../src/agents/acp/lazy-driver.js";
import type { ProcessExit, SessionDriver, StreamOutcome } from "../../../src/agents/adapter.js";

/** A driver that records what reaches it, in order. */
function recorder(seen: string[]): SessionDriver {
  return {
    stdout: (line) => seen.push(`out:${line}`),
    stderr: (line) => seen.push(`err:${line}`),
    finish: async (exit: ProcessExit): Promise<StreamOutcome> => {
      seen.push(`finish:${exit.code}`);
      return {};
    },
  };
}

describe("a session driver loaded when its agent starts", () => {
  it("hands on, in order, what the agent wrote while the driver was loading, then the rest directly", async () => {
    const seen: string[] = [];
    let loaded!: (driver: SessionDriver) => void;
    const driver = lazyDriver(
      () => new Promise((resolve) => (loaded = resolve)),
      () => {},
    );
    driver.stdout("a");
    driver.stderr?.("b");
    driver.stdout("c");
    expect(seen).toEqual([]);
    loaded(recorder(seen));
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual(["out:a", "err:b", "out:c"]);
    driver.stdout("d");
    expect(seen.at(-1)).toBe("out:d");
    await driver.finish({ code: 0, signal: null });
    expect(seen).toEqual(["out:a", "err:b", "out:c", "out:d", "finish:0"]);
  });

  it("finishes only once the driver is loaded, whatever came first", async () => {
    const seen: string[] = [];
    let loaded!: (driver: SessionDriver) => void;
    const driver = lazyDriver(
      () => new Promise((resolve) => (loaded = resolve)),
      () => {},
    );
    driver.stdout("early");
    const finishing = driver.finish({ code: 3, signal: null });
    loaded(recorder(seen));
    await finishing;
    expect(seen).toEqual(["out:early", "finish:3"]);
  });

  it("ends the session at once when the driver cannot be loaded, and fails the run saying why", async () => {
    const failures: unknown[] = [];
    const driver = lazyDriver(
      () => Promise.reject(new Error("no such module")),
      (error) => failures.push(error),
    );
    driver.stdout("lost");
    await new Promise((resolve) => setImmediate(resolve));
    // The agent waits for a first message that will never come: the session is ended, not left hanging.
    expect(failures).toEqual([new Error("no such module")]);
    // The agent exits 0 once its stdin closes: the run still failed, and says why.
    const outcome = await driver.finish({ code: 0, signal: null });
    expect(outcome.processOutcome).toBe("failed");
    expect(outcome.failure?.message).toMatch(
      /could not load its ACP client.*no such module.*run the task again/,
    );
  });
});
