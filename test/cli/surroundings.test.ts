// How caesar behaves in what surrounds it: a working directory that is gone, a pipe that closes early.
import { execFileSync } from "node:child_process";
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CAESAR_BIN, parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { makeRepo, taskDir, tempDir } from "../helpers/repo.js";

// A shell whose directory was removed (a deleted worktree, a cleaned temp dir) still runs caesar.
function runInRemovedDirectory(args: string[]): { code: number; stdout: string } {
  const dir = join(tempDir(), "gone");
  const script = `mkdir "$1" && cd "$1" && rmdir "$1" && shift && exec "$@"`;
  try {
    const stdout = execFileSync("sh", ["-c", script, "sh", dir, CAESAR_BIN, ...args], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    return { code: 0, stdout };
  } catch (error) {
    const failed = error as { status: number; stdout: string };
    return { code: failed.status, stdout: failed.stdout };
  }
}

describe("a working directory that no longer exists", () => {
  it.each([["ps"], ["run", "--agent", "reference", "do it"]])(
    "makes `caesar %s` exit 2 saying so",
    (...args) => {
      const result = runInRemovedDirectory([...args, "--json"]);
      expect(result.code).toBe(2);
      expect(JSON.parse(result.stdout).error).toMatchObject({
        code: "cwd_missing",
        summary: "The current directory no longer exists.",
      });
    },
  );
});

describe("output piped into a reader that stops early (`caesar logs … | head`)", () => {
  it("ends quietly, as other command-line tools do", async () => {
    const root = makeRepo();
    const run = await runCaesar(["run", "--json", "--agent", "reference", 'create a.txt containing "a"'], {
      cwd: root,
    });
    const { task_id: id } = parseJsonOutput<{ task_id: string }>(run);
    // Far more events than a pipe holds, so the reader is gone while caesar still writes.
    const events = join(taskDir(root, id), "events.jsonl");
    const last = JSON.parse(readFileSync(events, "utf8").trim().split("\n").at(-1)!);
    const lines = Array.from({ length: 5_000 }, (_, i) =>
      JSON.stringify({ ...last, seq: last.seq + 1 + i, type: "progress", message: `step ${i}` }),
    );
    appendFileSync(events, `${lines.join("\n")}\n`);
    const script = 'cd "$1" && "$2" logs "$3" 2>stderr.txt | head -1 >/dev/null';
    execFileSync("sh", ["-c", script, "sh", root, CAESAR_BIN, id]);
    expect(readFileSync(join(root, "stderr.txt"), "utf8")).toBe("");
  });
});
