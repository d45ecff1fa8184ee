import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { changedFiles, touchedPaths } from "../../src/workspace/changes.js";
import { snapshotTree } from "../../src/workspace/snapshot.js";
import { git, makeRepo } from "../helpers/repo.js";

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
