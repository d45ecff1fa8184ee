import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { acquireSlot, readHolders } from "../../src/engine/conductor/slots.js";
import { deadPid, ProcessPool } from "../helpers/process-pool.js";

const CONTENDER = fileURLToPath(new URL("./slot-contender.ts", import.meta.url));
const TAKER = fileURLToPath(new URL("./slot-taker.ts", import.meta.url));

async function until(what: string, condition: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** A slot taker process (slot-taker.ts), its files in a folder of its own. */
function startTaker(slots: string, max: number, env: Record<string, string> = {}) {
  const out = mkdtempSync(join(tmpdir(), "caesar-taker-"));
  const child = spawn(process.execPath, ["--import", "tsx", TAKER, slots, String(max), out], {
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, ...env },
  });
  const has = (name: string) => existsSync(join(out, name));
  return { child, out, has, release: () => writeFileSync(join(out, "release"), "") };
}

function holdsOf(data: string): number {
  return readdirSync(data)
    .filter((name) => name.startsWith("holds-"))
    .reduce((sum, name) => sum + Number(readFileSync(join(data, name), "utf8") || 0), 0);
}

describe("reclaiming the slot of a holder that died", () => {
  it("a reclaimer stalled after reading the dead holder's record never removes the live holder that took the slot since", {
    timeout: 180_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "caesar-slots-"));
    const slots = join(dir, "slots");
    const pause = join(dir, "pause");
    mkdirSync(slots);
    mkdirSync(pause);
    const dead = { pid: await deadPid(), task_id: "t_dead0001", since: new Date().toISOString() };
    writeFileSync(join(slots, "0.json"), JSON.stringify(dead));
    const takers: ReturnType<typeof startTaker>[] = [];
    try {
      // The slow reclaimer reads the dead holder's record, then stalls.
      const slow = startTaker(slots, 1, { SLOT_PAUSE_DIR: pause });
      takers.push(slow);
      await until("the slow reclaimer's first read", () => existsSync(join(pause, "paused-1")));
      // Meanwhile another process reclaims the slot and runs in it.
      const first = startTaker(slots, 1);
      takers.push(first);
      await until("the first taker to hold the slot", () => first.has("holding"));
      // The slow one goes on with what it read; stalled again at its next read, a third process comes.
      writeFileSync(join(pause, "go-1"), "");
      await until("the slow reclaimer's second read", () => existsSync(join(pause, "paused-2")));
      const third = startTaker(slots, 1);
      takers.push(third);
      await until("the third taker to wait or hold", () => third.has("waiting") || third.has("holding"));
      for (let n = 2; n <= 200; n++) writeFileSync(join(pause, `go-${n}`), "");
      await until("the slow reclaimer to wait or hold", () => slow.has("waiting") || slow.has("holding"));
      // max_parallel = 1: the first taker alone holds it; neither of the others got in.
      expect([first.has("holding"), slow.has("holding"), third.has("holding")]).toEqual([true, false, false]);
      expect(JSON.parse(readFileSync(join(slots, "0.json"), "utf8"))).toMatchObject({ pid: first.child.pid });
      // And the slot is handed on when the holder lets it go.
      first.release();
      await until("the next taker to hold the slot", () => slow.has("holding") || third.has("holding"));
      expect(slow.has("holding") && third.has("holding")).toBe(false);
    } finally {
      for (const taker of takers) taker.child.kill("SIGKILL");
    }
  });
});

describe("slot files left by processes that died", () => {
  const waiting = new Error("it waits");
  const stopWhenWaiting = () => {
    throw waiting;
  };

  it("an empty slot file (an older caesar killed while writing it) is taken back after a minute, not before", async () => {
    const slots = join(mkdtempSync(join(tmpdir(), "caesar-slots-")), "slots");
    mkdirSync(slots);
    writeFileSync(join(slots, "0.json"), "");
    await expect(acquireSlot(slots, "t_new00001", 1, stopWhenWaiting)).rejects.toBe(waiting);
    const old = new Date(Date.now() - 2 * 60_000);
    utimesSync(join(slots, "0.json"), old, old);
    const release = await acquireSlot(slots, "t_new00001", 1, stopWhenWaiting);
    expect(JSON.parse(readFileSync(join(slots, "0.json"), "utf8"))).toMatchObject({ task_id: "t_new00001" });
    await release();
    expect(readdirSync(slots)).toEqual([".tmp"]);
  });

  it("a writer's temp file is removed once its process is gone; a live one's is left", async () => {
    const slots = join(mkdtempSync(join(tmpdir(), "caesar-slots-")), "slots");
    mkdirSync(join(slots, ".tmp"), { recursive: true });
    const deadTemp = `${await deadPid()}.abcdef01.tmp`;
    const liveTemp = `${process.pid}.abcdef02.tmp`;
    writeFileSync(join(slots, ".tmp", deadTemp), "{");
    writeFileSync(join(slots, ".tmp", liveTemp), "{");
    writeFileSync(
      join(slots, "0.json"),
      JSON.stringify({ pid: process.pid, task_id: "t_held0001", since: "x" }),
    );
    await expect(acquireSlot(slots, "t_new00001", 1, stopWhenWaiting)).rejects.toBe(waiting);
    expect(readdirSync(join(slots, ".tmp"))).toEqual([liveTemp]);
  });

  it("a slot file it cannot read at all (another user's, an I/O error) is never taken for dead", async () => {
    const slots = join(mkdtempSync(join(tmpdir(), "caesar-slots-")), "slots");
    mkdirSync(slots);
    // A folder in a slot's place: reading it fails (EISDIR) for root too, as another user's 0600 file
    // does for anyone else.
    mkdirSync(join(slots, "0.json"));
    const old = new Date(Date.now() - 2 * 60_000);
    utimesSync(join(slots, "0.json"), old, old);
    await expect(acquireSlot(slots, "t_new00001", 1, stopWhenWaiting)).rejects.toBe(waiting);
    expect(readdirSync(slots)).toContain("0.json");
  });
});

describe("slots under SIGKILL", () => {
  it("never lets more than max_parallel processes hold a slot, and loses no slot, while holders and reclaimers are killed", {
    timeout: 300_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "caesar-slots-"));
    const slots = join(dir, "slots");
    const data = join(dir, "data");
    mkdirSync(data);
    const MAX = 2;
    const CONTENDERS = 8;
    const KILLS = 40;
    const pool = new ProcessPool("c", (id) => ["--import", "tsx", CONTENDER, slots, data, String(MAX), id]);
    for (let i = 0; i < CONTENDERS; i++) pool.start();
    while (holdsOf(data) < 5) await sleep(50);
    // Kill holders above all (their slot must then be reclaimed, by several waiters at once), and
    // random contenders (waiters mid-reclaim among them); start a replacement each time.
    for (let kill = 0; kill < KILLS; kill++) {
      await sleep(30 + Math.random() * 120);
      const holding = readdirSync(join(data, "holding")).map(Number);
      const children = [...pool.live.values()];
      const victim =
        kill % 3 !== 2
          ? children.find((child) => holding.includes(child.pid!))
          : children[Math.floor(Math.random() * children.length)];
      victim?.kill("SIGKILL");
      pool.start();
    }
    const before = holdsOf(data);
    // Still making progress after the kills: no slot was lost for good.
    const deadline = Date.now() + 60_000;
    while (holdsOf(data) < before + 20 && Date.now() < deadline) await sleep(100);
    writeFileSync(join(data, "stop"), "");
    expect(await pool.failures()).toEqual([]);
    expect(existsSync(join(data, "violations")) ? readFileSync(join(data, "violations"), "utf8") : "").toBe(
      "",
    );
    expect(holdsOf(data)).toBeGreaterThanOrEqual(before + 20);
    // Every slot can be taken again: none is held by a dead process's file, none was left half-written.
    expect(await readHolders(slots)).toEqual([]);
    const releases = [];
    for (let i = 0; i < MAX; i++)
      releases.push(
        await acquireSlot(slots, `t_final${i}`, MAX, () => {
          throw new Error(`slot ${i} could not be taken: ${readdirSync(slots).join(", ")}`);
        }),
      );
    for (const release of releases) await release();
  });
});
