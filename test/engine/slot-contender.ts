// One contender of the slot stress test (slots.test.ts beside it), run as its own process:
// `node --import tsx slot-contender.ts <slotsDir> <dataDir> <max> <id>`. It takes a slot, holds it a
// few milliseconds, gives it back, and starts over, until killed or until <dataDir>/stop exists.
// Inside each hold it proves that at most <max> live processes hold a slot: each holder keeps a marker
// <dataDir>/holding/<pid>; finding more than <max> markers of live processes is a violation, written to
// <dataDir>/violations. Each hold is counted in <dataDir>/holds-<id>.
import { appendFileSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { acquireSlot } from "../../src/engine/conductor/slots.js";
import { isProcessAlive } from "../../src/support/process.js";

const [slotsDir, dataDir, maxText, id] = process.argv.slice(2) as [string, string, string, string];
const max = Number(maxText);
const holding = join(dataDir, "holding");
mkdirSync(holding, { recursive: true });
const mine = join(holding, String(process.pid));

function checkCap(): void {
  const live = readdirSync(holding).filter((name) => isProcessAlive(Number(name)));
  if (live.length > max)
    appendFileSync(
      join(dataDir, "violations"),
      `${process.pid}: ${live.length} holders (${live.join(" ")})\n`,
    );
}

let holds = 0;
while (!existsSync(join(dataDir, "stop"))) {
  const release = await acquireSlot(slotsDir, `t_${id}`, max, () => undefined);
  writeFileSync(mine, "");
  checkCap();
  await sleep(2 + Math.random() * 20);
  checkCap();
  rmSync(mine, { force: true });
  await release();
  writeFileSync(join(dataDir, `holds-${id}`), String(++holds));
}
