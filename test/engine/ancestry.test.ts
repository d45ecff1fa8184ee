import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { taskIds } from "../helpers/adversary.js";
import { CAESAR_BIN } from "../helpers/cli.js";
import { FIXTURE_BIN, makeRepo } from "../helpers/repo.js";

// caesar tells a person from a task's agent partly by walking the process's ancestors in /proc. A walk
// that cannot finish (here: a tree deeper than it walks) proves nothing: it refuses, never "no task".

const NEST = join(FIXTURE_BIN, "nest.sh");

function runNested(depth: number, root: string) {
  const result = spawnSync(
    NEST,
    [
      String(depth),
      process.execPath,
      CAESAR_BIN,
      "run",
      "--json",
      "--agent",
      "reference",
      'create a.txt containing "a"',
    ],
    { cwd: root, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" }, timeout: 120_000 },
  );
  return { code: result.status, json: JSON.parse(result.stdout || "{}"), stderr: result.stderr };
}

describe.skipIf(process.platform !== "linux")("the /proc ancestry walk", () => {
  it("refuses when it runs out of steps (more than 64 ancestors), and starts nothing", () => {
    const root = makeRepo();
    const deep = runNested(70, root);
    expect(deep.code, deep.stderr).toBe(1);
    expect(deep.json.error?.code).toBe("ancestry_unproven");
    expect(deep.json.error?.summary).toContain("more than 64 ancestors");
    expect(taskIds(root)).toEqual([]);
  });

  it("a shallow tree is a person's, as before", () => {
    const root = makeRepo();
    const shallow = runNested(3, root);
    expect(shallow.code, shallow.stderr).toBe(0);
    expect(taskIds(root)).toHaveLength(1);
  });
});
