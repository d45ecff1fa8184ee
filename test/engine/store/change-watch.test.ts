import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ChangeWatch } from "../../../src/engine/store/change-watch.js";
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
  ])("(%s) times out when nothing changes, and resolves at once when aborted", async (_how, pollOnly) => {
    const watch = new ChangeWatch(tempDir(), { pollOnly, pollMs: 60_000 });
    try {
      await watch.next(50);
      const abort = new AbortController();
      const waiting = watch.next(60_000, abort.signal);
      abort.abort();
      await waiting;
    } finally {
      watch.close();
    }
  });
});
