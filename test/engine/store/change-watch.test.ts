import { appendFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ChangeWatch, RAW_OUTPUT_FILES, watchPath } from "../../../src/engine/store/change-watch.js";
import { tempDir } from "../../helpers/repo.js";

describe("ChangeWatch", () => {
  it("does not lose a change that came while nobody was waiting", async () => {
    const dir = tempDir();
    // No polling to hide a lost change: only fs.watch can end this wait early.
    const watch = new ChangeWatch(dir, { pollMs: 60_000 });
    try {
      writeFileSync(join(dir, "state.json"), "{}"); // while the caller is busy elsewhere
      await new Promise((resolve) => setTimeout(resolve, 300));
      const started = Date.now();
      await watch.next(30_000);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      watch.close();
    }
  });

  it.each([
    ["fs.watch", false],
    ["polling", true],
  ])("(%s) times out when nothing changes", async (_how, pollOnly) => {
    const watch = new ChangeWatch(tempDir(), { pollOnly, pollMs: 60_000 });
    try {
      const started = performance.now();
      await watch.next(200);
      // A timer never fires early: resolving sooner would mean a change was seen where there was none.
      expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    } finally {
      watch.close();
    }
  });

  it.each([
    ["fs.watch", false],
    ["polling", true],
  ])("(%s) resolves at once when aborted, not after its timeout", async (_how, pollOnly) => {
    const watch = new ChangeWatch(tempDir(), { pollOnly, pollMs: 60_000 });
    try {
      const abort = new AbortController();
      const waiting = watch.next(10 * 60_000, abort.signal).then(() => "resolved");
      abort.abort();
      // Far below the ten minutes it would otherwise wait, and generous for a loaded machine.
      const bound = new Promise((resolve) => setTimeout(resolve, 10_000, "still waiting"));
      expect(await Promise.race([waiting, bound])).toBe("resolved");
      // Aborted before it starts: at once too.
      expect(await Promise.race([watch.next(10 * 60_000, abort.signal).then(() => "resolved"), bound])).toBe(
        "resolved",
      );
    } finally {
      watch.close();
    }
  });

  it("is not woken by the files it ignores (a task's raw output), and still by the others", async () => {
    const dir = tempDir();
    const calls = { ignoring: 0, all: 0 };
    let seenState: () => void = () => {};
    const stateSeen = new Promise<void>((resolve) => {
      seenState = resolve;
    });
    // No polling: fs.watch alone calls.
    const stops = [
      watchPath(
        dir,
        () => {
          calls.ignoring += 1;
          seenState();
        },
        { pollMs: 60_000, ignore: RAW_OUTPUT_FILES },
      ),
      watchPath(dir, () => (calls.all += 1), { pollMs: 60_000 }),
    ];
    try {
      for (let i = 0; i < 20; i++) {
        appendFileSync(join(dir, "raw.log"), `line ${i}\n`);
        await new Promise((resolve) => setImmediate(resolve));
      }
      writeFileSync(join(dir, "state.json"), "{}");
      // Events come in order: once the state's change is seen, the raw output's were seen before it.
      await stateSeen;
      expect(calls.all).toBeGreaterThan(calls.ignoring);
      expect(calls.ignoring).toBeGreaterThanOrEqual(1);
      expect(calls.ignoring).toBeLessThanOrEqual(2);
    } finally {
      for (const stop of stops) stop();
    }
  });

  it("counts only the entries it was given: a follower is not woken by every write to the logs", async () => {
    const dir = tempDir();
    let calls = 0;
    const stop = watchPath(dir, () => calls++, { pollMs: 60_000, only: ["state.json"] });
    try {
      writeFileSync(join(dir, "raw.log"), "output");
      writeFileSync(join(dir, ".state.json.1.tmp"), "{}");
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(calls).toBe(0);
      writeFileSync(join(dir, "state.json"), "{}");
      for (let waited = 0; calls === 0 && waited < 10_000; waited += 20)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(calls).toBeGreaterThan(0);
    } finally {
      stop();
    }
  });
});
