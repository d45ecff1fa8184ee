import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { isGroupAlive } from "../../src/support/process.js";
import { tempDir } from "../helpers/repo.js";
import { itWith, PYTHON3 } from "../helpers/system-deps.js";

// A process group whose members are all zombies — an orphan the machine's init has not reaped yet, as
// bubblewrap leaves when a sandbox ends — is over: waiting for it held every sandboxed task's end.

/** A group left with one zombie: its parent (alive, never reaping it) moved to a group of its own. */
const ZOMBIE_MAKER = `
import os, sys, time
child = os.fork()
if child == 0:
    os._exit(0)
time.sleep(0.2)
os.setpgid(0, 0)
open(sys.argv[1], "w").write(str(child))
time.sleep(30)
`;

async function until(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.runIf(process.platform === "linux")("a process group", () => {
  itWith(PYTHON3, "with only zombies left is gone; with a live member it is not", async () => {
    const marker = join(tempDir("caesar-zombie-"), "child");
    const leader = spawn("sh", ["-c", `python3 -c '${ZOMBIE_MAKER}' ${marker} & exit 0`], {
      detached: true,
      stdio: "ignore",
    });
    const group = leader.pid!;
    await new Promise((resolve) => leader.once("exit", resolve));
    await until(() => existsSync(marker) && readFileSync(marker, "utf8") !== "");
    const zombie = Number(readFileSync(marker, "utf8"));
    try {
      // The kernel still has the group (its zombie answers kill(0)); nothing of it runs.
      expect(() => process.kill(-group, 0)).not.toThrow();
      expect(readFileSync(`/proc/${zombie}/stat`, "utf8")).toMatch(/\) Z /);
      expect(isGroupAlive(group)).toBe(false);
    } finally {
      // The zombie's parent, in a group of its own now: ending it lets init reap the zombie.
      const parent = Number(readFileSync(`/proc/${zombie}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);
      process.kill(parent, "SIGKILL");
    }

    const live = spawn("sleep", ["5"], { detached: true, stdio: "ignore" });
    try {
      expect(isGroupAlive(live.pid!)).toBe(true);
    } finally {
      live.kill("SIGKILL");
    }
  });
});
