import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { deleteStart, fetchStart, pushResult, pushStart, remoteRef } from "../../src/cluster/git-refs.js";
import { fetchResultCommit } from "../../src/workspace/result-ref.js";
import { cloneOf, makeSharedRemote, tempDir } from "../helpers/cluster.js";
import { git } from "../helpers/repo.js";

function commitIn(clone: string, file: string): string {
  writeFileSync(join(clone, file), `${file}\n`);
  git(clone, "add", file);
  git(clone, "commit", "--quiet", "-m", file);
  return git(clone, "rev-parse", "HEAD");
}

describe("code through git: starting points and results on the shared remote", () => {
  it("pushes a starting point a worker fetches, twice without harm, and checks it names the task's commit", async () => {
    const lab = tempDir();
    const remote = makeSharedRemote(lab, "");
    const submitter = cloneOf(remote, join(lab, "s"));
    const worker = cloneOf(remote, join(lab, "w"));
    const commit = commitIn(submitter, "unpushed.txt");
    await pushStart(submitter, "origin", "t_refs01", commit);
    await pushStart(submitter, "origin", "t_refs01", commit);
    await fetchStart(worker, "origin", "t_refs01", commit);
    expect(git(worker, "cat-file", "-t", commit)).toBe("commit");
    await expect(fetchStart(worker, "origin", "t_refs01", "0".repeat(40))).rejects.toMatchObject({
      code: "start_ref_mismatch",
    });
    await deleteStart(submitter, "origin", "t_refs01");
    expect(await remoteRef(submitter, "origin", "refs/caesar/start/t_refs01")).toBe("");
  });

  it("pushes a result only over the value its pusher last saw: a late pusher cannot overwrite", async () => {
    const lab = tempDir();
    const remote = makeSharedRemote(lab, "");
    const a = cloneOf(remote, join(lab, "a"));
    const b = cloneOf(remote, join(lab, "b"));
    const fromA = commitIn(a, "a.txt");
    const fromB = commitIn(b, "b.txt");
    expect(await pushResult(b, "origin", "t_refs02", fromB, "")).toBe("pushed");
    // A pushes expecting no result yet: refused, B's stays.
    expect(await pushResult(a, "origin", "t_refs02", fromA, "")).toBe("stale");
    expect(await remoteRef(a, "origin", "refs/caesar/tasks/t_refs02")).toBe(fromB);
    // Knowing what is there (its claim still its own), it may replace it.
    expect(await pushResult(a, "origin", "t_refs02", fromA, fromB)).toBe("pushed");

    const submitter = cloneOf(remote, join(lab, "s"));
    await fetchResultCommit(submitter, "origin", "t_refs02", fromA);
    expect(git(submitter, "rev-parse", "refs/caesar/tasks/t_refs02")).toBe(fromA);
    await expect(fetchResultCommit(submitter, "origin", "t_refs02", fromB)).rejects.toMatchObject({
      code: "result_ref_mismatch",
    });
  });
});
