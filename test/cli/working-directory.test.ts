import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CAESAR_LAUNCHER } from "../helpers/cli.js";
import { tempDir } from "../helpers/repo.js";

// A shell whose directory was removed (a deleted worktree, a cleaned temp dir) still runs caesar.
function runInRemovedDirectory(args: string[]): { code: number; stdout: string } {
  const dir = join(tempDir(), "gone");
  const script = `mkdir "$1" && cd "$1" && rmdir "$1" && shift && exec "$@"`;
  try {
    const stdout = execFileSync("sh", ["-c", script, "sh", dir, CAESAR_LAUNCHER, ...args], {
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
