import { spawn } from "node:child_process";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isWorkerOf, recordWorker } from "../../../src/engine/conductor/worker-record.js";
import { controlPaths } from "../../../src/engine/store/control.js";
import { recordProcess } from "../../../src/support/process.js";
import { makeRepo } from "../../helpers/repo.js";

// What a brokered command believes of its parent on a cluster worker: the record the worker keeps in the
// clone's control directory, and only while the very process it names lives.
describe("a cluster worker's record in its clone", () => {
  it("names this process while it runs, and nothing once removed", async () => {
    const root = makeRepo();
    expect(isWorkerOf(root, process.pid)).toBe(false);
    const unrecord = await recordWorker(root);
    expect(isWorkerOf(root, process.pid)).toBe(true);
    await unrecord();
    expect(isWorkerOf(root, process.pid)).toBe(false);
  });

  it("a worker starting removes the records of workers gone without removing theirs, and keeps a live one's", async () => {
    const root = makeRepo();
    const folder = join(controlPaths(root).dir, "workers");
    const live = spawn("sleep", ["30"]);
    try {
      await recordWorker(root);
      // A worker killed with -9 left its record; another live worker has its own.
      writeFileSync(join(folder, "999999999.json"), JSON.stringify({ pid: 999999999 }));
      writeFileSync(join(folder, `${live.pid}.json`), JSON.stringify(recordProcess(live.pid!)));
      writeFileSync(join(folder, "notes.txt"), "not a record");
      await recordWorker(root);
      expect(readdirSync(folder).sort()).toEqual(
        [`${live.pid}.json`, `${process.pid}.json`, "notes.txt"].sort(),
      );
    } finally {
      live.kill("SIGKILL");
    }
  });

  it("is not believed for another process, a dead one, or another process that took its pid", async () => {
    const root = makeRepo();
    const folder = join(controlPaths(root).dir, "workers");
    await recordWorker(root);
    // A record copied under another live pid names this process, not that one.
    const child = spawn("sleep", ["30"]);
    try {
      writeFileSync(join(folder, `${child.pid}.json`), JSON.stringify({ pid: process.pid }));
      expect(isWorkerOf(root, child.pid!)).toBe(false);
      // The right pid with another process's start time: a pid reused since.
      writeFileSync(join(folder, `${child.pid}.json`), JSON.stringify({ pid: child.pid, start: "1" }));
      expect(isWorkerOf(root, child.pid!)).toBe(false);
    } finally {
      child.kill("SIGKILL");
    }
    writeFileSync(join(folder, "999999999.json"), JSON.stringify({ pid: 999999999 }));
    expect(isWorkerOf(root, 999999999)).toBe(false);
    writeFileSync(join(folder, "1.json"), "not json");
    expect(isWorkerOf(root, 1)).toBe(false);
  });
});
