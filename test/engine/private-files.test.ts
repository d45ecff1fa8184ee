import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CAESAR_BIN } from "../helpers/cli.js";
import { makeRepo, taskDir, taskRecordDir } from "../helpers/repo.js";

// A task's files hold the agent's raw output, its report, caesar's records: the user's alone. With the
// usual umask (022), another account (nobody) reads none of them; every directory caesar makes is 0700 and
// every file it writes 0600, whatever the umask says.

const IS_ROOT = process.getuid?.() === 0;
const canDrop =
  IS_ROOT && spawnSync("runuser", ["-u", "nobody", "--", "true"], { encoding: "utf8" }).status === 0;

let root: string;
let id: string;
let scratchMode: number;

function modeOf(path: string): number {
  return statSync(path).mode & 0o777;
}

function readsAsNobody(path: string): boolean {
  return spawnSync("runuser", ["-u", "nobody", "--", "cat", path], { encoding: "utf8" }).status === 0;
}

describe.skipIf(!canDrop)("task files under umask 022, against a second account", () => {
  beforeAll(() => {
    root = makeRepo({ "README.md": "# private\n" });
    // Let nobody reach the project, as it could any project under /home: only caesar's own modes protect it.
    scratchMode = modeOf(tmpdir());
    chmodSync(tmpdir(), 0o711);
    chmodSync(root, 0o755);
    const run = spawnSync(
      "sh",
      [
        "-c",
        `umask 022 && exec "${CAESAR_BIN}" run --json --agent reference 'create hello.txt containing "hi"'`,
      ],
      { cwd: root, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" }, timeout: 120_000 },
    );
    expect(run.status, run.stderr).toBe(0);
    id = (JSON.parse(run.stdout) as { task_id: string }).task_id;
  }, 180_000);

  afterAll(() => {
    if (scratchMode !== undefined) chmodSync(tmpdir(), scratchMode);
  });

  it("makes task, control and state directories 0700", () => {
    const dirs = [
      join(root, ".caesar", "tasks"),
      taskDir(root, id),
      join(root, ".git", "caesar"),
      taskRecordDir(root, id),
      join(root, ".caesar", "state"),
    ];
    for (const dir of dirs.filter((d) => existsSync(d))) expect([dir, modeOf(dir)]).toEqual([dir, 0o700]);
  });

  it("writes its files 0600", () => {
    const files = ["state.json", "plan.json", "task.json", "events.jsonl", "raw.log"].map((name) =>
      join(taskDir(root, id), name),
    );
    files.push(join(taskRecordDir(root, id), "state.json"), join(taskRecordDir(root, id), "plan.json"));
    for (const file of files) expect([file, modeOf(file)]).toEqual([file, 0o600]);
  });

  it("lets nobody read raw.log, the report, the events or caesar's records", () => {
    const files = ["raw.log", "report.json", "events.jsonl", "state.json"].map((name) =>
      join(taskDir(root, id), name),
    );
    files.push(join(taskRecordDir(root, id), "state.json"));
    for (const file of files) {
      expect(existsSync(file), file).toBe(true);
      expect([file, readsAsNobody(file)]).toEqual([file, false]);
    }
  });
});
