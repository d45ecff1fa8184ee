// One process taking a slot, for slots.test.ts: `node --import tsx slot-taker.ts <slotsDir> <max> <out>`.
// It writes <out>/waiting when it has to wait, <out>/holding once it holds a slot, and holds it until
// <out>/release exists. With SLOT_PAUSE_DIR set it stalls after its n-th read of a file in <slotsDir>,
// until <pause>/go-<n> exists (writing <pause>/paused-<n> first): a process descheduled at that point.
import { existsSync, writeFileSync } from "node:fs";
import fsp from "node:fs/promises";
import { syncBuiltinESMExports } from "node:module";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

const [slotsDir, maxText, out] = process.argv.slice(2) as [string, string, string];
const pause = process.env.SLOT_PAUSE_DIR;
if (pause) {
  const readFile = fsp.readFile;
  let reads = 0;
  fsp.readFile = (async (path: Parameters<typeof readFile>[0], ...rest: unknown[]) => {
    const content = await (readFile as (...args: unknown[]) => Promise<unknown>)(path, ...rest);
    if (String(path).startsWith(`${slotsDir}/`)) {
      const n = ++reads;
      writeFileSync(join(pause, `paused-${n}`), String(path));
      while (!existsSync(join(pause, `go-${n}`))) await sleep(20);
    }
    return content;
  }) as typeof readFile;
  syncBuiltinESMExports();
}
const { acquireSlot } = await import("../../src/engine/conductor/slots.js");
const release = await acquireSlot(slotsDir, `t_${process.pid}`, Number(maxText), (holders) => {
  writeFileSync(join(out, "waiting"), JSON.stringify(holders));
});
writeFileSync(join(out, "holding"), String(process.pid));
while (!existsSync(join(out, "release"))) await sleep(20);
await release();
writeFileSync(join(out, "released"), "");
