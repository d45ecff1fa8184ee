import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { snapshotTree } from "../../src/workspace/snapshot.js";
import { git, makeRepo, writeFiles } from "../helpers/repo.js";

/** A repository that does not ignore caesar's folders (the user's .gitignore knows nothing of them). */
function bareProject(): string {
  const root = makeRepo({ "a.txt": "a\n" });
  writeFileSync(join(root, ".gitignore"), "");
  git(root, "add", ".");
  git(root, "commit", "--quiet", "-m", "no ignores");
  return root;
}

function treeFiles(root: string, tree: string): string[] {
  return git(root, "ls-tree", "-r", "--name-only", tree).split("\n").filter(Boolean);
}

let churners: ChildProcess[] = [];
afterEach(() => {
  for (const child of churners) child.kill("SIGKILL");
  churners = [];
});

/** Another task's bookkeeping: lock files appearing and vanishing as fast as a process can. */
function churn(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const script = `
    const fs = require("node:fs"), path = require("node:path");
    const dir = ${JSON.stringify(dir)};
    for (;;) {
      const lock = path.join(dir, ".state.lock." + Math.random().toString(16).slice(2));
      try { fs.mkdirSync(lock); fs.writeFileSync(path.join(lock, "owner.json"), "{}"); fs.rmSync(lock, { recursive: true }); } catch {}
    }`;
  churners.push(spawn(process.execPath, ["-e", script], { stdio: "ignore" }));
}

describe("snapshots of a work tree", () => {
  it("never take in caesar's own folders, even while other tasks' lock files come and go", async () => {
    const root = bareProject();
    writeFiles(root, {
      ".caesar/config.toml": "[policy]\n",
      ".caesar/tasks/t_00000001/state.json": "{}",
      ".caesar/state/changes.json": "{}",
      ".caesar/chat/general/0001.md": "hi",
      "sub/.caesar/tasks/t_00000002/state.json": "{}",
      "b.txt": "b\n",
    });
    churn(join(root, ".caesar", "tasks", "t_00000003"));
    for (let i = 0; i < 12; i++) {
      const tree = await snapshotTree(root);
      const files = treeFiles(root, tree);
      expect(files).toContain("b.txt");
      expect(files).toContain(".caesar/config.toml");
      expect(files.filter((file) => /(^|\/)\.caesar\/(tasks|wt|state|chat)\//.test(file))).toEqual([]);
    }
  });

  it("keeps what the index had for excluded paths, ignored or not", async () => {
    const root = bareProject();
    writeFileSync(join(root, ".gitignore"), "node_modules/\n");
    writeFiles(root, { "tracked/keep.txt": "v1\n" });
    git(root, "add", ".");
    git(root, "commit", "--quiet", "-m", "tracked");
    writeFiles(root, {
      "tracked/keep.txt": "v2, a change the snapshot must not see\n",
      "node_modules/x/index.js": "x",
      ".env": "SECRET=1\n",
      "odd[1]*?.txt": "glob characters in a name\n",
      "odd1x.txt": "matched by that name as a glob, but not the same file\n",
      "c.txt": "c\n",
    });
    const tree = await snapshotTree(root, ["tracked", "node_modules/", ".env", "odd[1]*?.txt"]);
    expect(git(root, "show", `${tree}:tracked/keep.txt`)).toBe("v1");
    const files = treeFiles(root, tree);
    expect(files).toContain("c.txt");
    expect(files).not.toContain(".env");
    expect(files).not.toContain("odd[1]*?.txt");
    expect(files).toContain("odd1x.txt");
    expect(files.some((file) => file.startsWith("node_modules/"))).toBe(false);
    // The user's index is untouched.
    expect(git(root, "status", "--porcelain")).toContain("?? c.txt");
  });
});
