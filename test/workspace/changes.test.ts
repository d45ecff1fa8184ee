import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { changedFiles, isPristine, touchedPaths } from "../../src/workspace/changes.js";
import { snapshotTree } from "../../src/workspace/snapshot.js";
import { git, makeRepo, tempDir } from "../helpers/repo.js";

describe("the changes between two trees", () => {
  it("sees a moved file as renamed (50% similar or more), and a rewritten one as deleted and added", async () => {
    const lines = Array.from({ length: 20 }, (_, i) => `line ${i}`).join("\n");
    const root = makeRepo({ "moved.txt": `${lines}\n`, "rewritten.txt": `${lines}\n`, "same.txt": "same\n" });
    const before = git(root, "rev-parse", "HEAD^{tree}");
    rmSync(join(root, "moved.txt"));
    writeFileSync(join(root, "moved-to.txt"), `${lines}\nline 20\n`);
    rmSync(join(root, "rewritten.txt"));
    writeFileSync(join(root, "elsewhere.txt"), "nothing in common\n");
    const after = await snapshotTree(root);
    const changes = await changedFiles(root, before, after);
    expect(changes).toEqual(
      expect.arrayContaining([
        { path: "moved-to.txt", action: "renamed", from: "moved.txt" },
        { path: "rewritten.txt", action: "deleted" },
        { path: "elsewhere.txt", action: "added" },
      ]),
    );
    expect(changes).toHaveLength(3);
    expect(touchedPaths(changes).sort()).toEqual([
      "elsewhere.txt",
      "moved-to.txt",
      "moved.txt",
      "rewritten.txt",
    ]);
  });
});

// The end of a task that changed nothing is found with one `git status` (finish.ts); any change at all
// must send it to the full snapshot.
function worktree(): { path: string; base: string } {
  const repo = makeRepo({ "a.txt": "a\n", "ignored.log": "" });
  writeFileSync(join(repo, ".gitignore"), "*.log\n");
  git(repo, "add", ".");
  git(repo, "commit", "--quiet", "-m", "ignore logs");
  const path = join(tempDir("caesar-wt-"), "wt");
  git(repo, "worktree", "add", "--quiet", "-b", "task", path, "HEAD");
  return { path, base: git(repo, "rev-parse", "HEAD") };
}

describe("isPristine", () => {
  it("is true for a fresh worktree, and for changes only to ignored files", async () => {
    const { path, base } = worktree();
    expect(await isPristine(path, base)).toBe(true);
    writeFileSync(join(path, "debug.log"), "noise\n");
    expect(await isPristine(path, base)).toBe(true);
  });

  it.each([
    ["a modified file", (path: string) => writeFileSync(join(path, "a.txt"), "changed\n")],
    ["an untracked file", (path: string) => writeFileSync(join(path, "new.txt"), "new\n")],
    [
      "a staged change",
      (path: string) => {
        writeFileSync(join(path, "a.txt"), "staged\n");
        git(path, "add", "a.txt");
      },
    ],
    ["a commit", (path: string) => git(path, "commit", "--quiet", "--allow-empty", "-m", "work")],
    ["a deleted file", (path: string) => git(path, "rm", "--quiet", "a.txt")],
  ])("is false after %s", async (_what, change) => {
    const { path, base } = worktree();
    change(path);
    expect(await isPristine(path, base)).toBe(false);
  });

  it("is false when the work tree is gone", async () => {
    expect(await isPristine(join(tempDir(), "missing"), "0".repeat(40))).toBe(false);
  });
});
