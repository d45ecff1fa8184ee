// One worker of the lock stress test (lock.test.ts beside it), run as its own process:
// `node --import tsx lock-worker.ts <lockDir> <dataDir> <id> <count>`. It makes <count> locked
// read-modify-writes of <dataDir>/counter.json, and proves, inside each one, that nobody else is inside:
// <dataDir>/inside is created exclusively and names the holder; finding it there with a live pid is a
// second holder, written to <dataDir>/violations; finding it with a dead pid is a takeover, written to
// <dataDir>/took-over as `<pid> after <dead pid>`. Each increment it completed is appended to
// <dataDir>/committed-<id> once its write is in place.
import { appendFileSync, linkSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { withLock } from "../../src/support/lock.js";
import { isProcessAlive } from "../../src/support/process.js";

const [lockDir, dataDir, id, countText] = process.argv.slice(2) as [string, string, string, string];
const inside = join(dataDir, "inside");
const counter = join(dataDir, "counter.json");

function enter(): void {
  // The marker is written whole before it takes its name (a link, exclusive; a rename), so a holder killed
  // while writing it leaves none or a complete one: never an empty marker that names no pid.
  const mine = `${inside}.${process.pid}`;
  writeFileSync(mine, String(process.pid));
  try {
    linkSync(mine, inside);
    rmSync(mine);
    return;
  } catch {
    // someone left it: fine if that process is dead (killed while holding the lock), a violation if not
  }
  const other = Number(readFileSync(inside, "utf8"));
  if (other !== process.pid && other > 0 && isProcessAlive(other))
    appendFileSync(join(dataDir, "violations"), `${process.pid} entered while ${other} was inside\n`);
  else appendFileSync(join(dataDir, "took-over"), `${process.pid} after ${other}\n`);
  renameSync(mine, inside);
}

function leave(): void {
  let holder = "";
  try {
    holder = readFileSync(inside, "utf8");
  } catch {
    // removed under us: someone else was inside too
  }
  if (holder !== String(process.pid))
    appendFileSync(
      join(dataDir, "violations"),
      `${process.pid} found ${holder || "nobody"} inside on leaving\n`,
    );
  rmSync(inside, { force: true });
}

for (let i = 0; i < Number(countText); i++) {
  await withLock(
    lockDir,
    async () => {
      enter();
      const state = JSON.parse(readFileSync(counter, "utf8")) as { value: number; ids: string[] };
      await sleep(1 + Math.random() * 4);
      const entry = `${id}:${i}`;
      const temp = `${counter}.${process.pid}.tmp`;
      writeFileSync(temp, JSON.stringify({ value: state.value + 1, ids: [...state.ids, entry] }));
      renameSync(temp, counter);
      appendFileSync(join(dataDir, `committed-${id}`), `${entry}\n`);
      leave();
    },
    // A worker killed between its mkdir and its record leaves a lock without holder: stale after 5 s.
    { timeoutMs: 120_000, pollMs: 2, staleMs: 5_000 },
  );
}
