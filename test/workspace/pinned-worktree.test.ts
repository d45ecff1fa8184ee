import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { git as runGit } from "../../src/workspace/git.js";
import { pinnedWorktreeOf } from "../../src/workspace/pinned-worktree.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { FIXTURE_BIN, git, makeRepo, tempDir, writeFiles } from "../helpers/repo.js";

interface RunJson {
  task_id: string;
  state: { outcome: string; worktree: string | null };
  report: {
    changes_verified_by: string;
    changes: { path: string; action: string }[];
    findings: { severity: string; title: string; detail?: string }[];
  };
}

function hijackProject(fixture = "git-hijacker.sh"): { root: string; marks: string } {
  const root = makeRepo({ "README.md": "# the user's project\n" });
  const marks = tempDir("caesar-marks-");
  writeFiles(root, {
    ".caesar/config.toml": [
      '[[agent]]\nid = "hijacker"',
      `bin = "${join(FIXTURE_BIN, fixture)}"`,
      'args = ["{{prompt}}"]',
      `env = { HIJACK_MARKS = "${marks}" }`,
    ].join("\n"),
  });
  git(root, "add", ".caesar/config.toml");
  git(root, "commit", "-qm", "caesar config");
  return { root, marks };
}

describe("a task's worktree is read through the git dir its project registered", () => {
  it("an agent that points its worktree's .git at a git dir of its making gets none of its commands run by caesar, and its change is still verified", async () => {
    const { root, marks } = hijackProject();
    const result = await runCaesar(
      ["run", "--json", "--agent", "hijacker", "--isolation", "worktree", "write changed.txt"],
      { cwd: root, timeoutMs: 90_000 },
    );
    expect(result.code, result.stderr).toBe(0);
    const body = parseJsonOutput<RunJson>(result);
    // caesar's snapshot (git add, git status) ran in that worktree: neither the hook nor the filter ran.
    expect(existsSync(join(marks, "fsmonitor-ran"))).toBe(false);
    expect(existsSync(join(marks, "filter-ran"))).toBe(false);
    expect(body.report.changes_verified_by).toBe("git");
    expect(body.report.changes.map((change) => change.path).sort()).toEqual([
      ".gitattributes",
      "changed.txt",
    ]);
    // The worktree's pointer is put back, and the report says what the agent did to it.
    const worktree = body.state.worktree!;
    const pinned = pinnedWorktreeOf(worktree)!;
    expect(readFileSync(join(worktree, ".git"), "utf8")).toBe(`gitdir: ${pinned.gitDir}\n`);
    const finding = body.report.findings.find((f) => f.title.includes(".git"));
    expect(finding?.severity).toBe("high");
    expect(finding?.detail).toContain("fake-repo");

    // Reading the task's change later goes through the registered git dir as well.
    writeFileSync(join(worktree, ".git"), `gitdir: ${join(marks, "fake-repo", ".git")}\n`);
    const diff = await runCaesar(["diff", body.task_id], { cwd: root });
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout).toContain("changed.txt");
    expect(existsSync(join(marks, "fsmonitor-ran"))).toBe(false);
    expect(existsSync(join(marks, "filter-ran"))).toBe(false);
  });

  it("a check that runs git in the worktree runs it through the pointer caesar put back, not the agent's", async () => {
    const { root, marks } = hijackProject();
    const result = await runCaesar(
      [
        "run",
        "--json",
        "--agent",
        "hijacker",
        "--isolation",
        "worktree",
        "--check",
        "git status --porcelain",
        "write changed.txt",
      ],
      { cwd: root, timeoutMs: 90_000 },
    );
    expect(result.code, result.stderr).toBe(0);
    const body = parseJsonOutput<RunJson>(result);
    expect(existsSync(join(marks, "fsmonitor-ran"))).toBe(false);
    expect(existsSync(join(marks, "filter-ran"))).toBe(false);
    expect(body.report.findings.filter((f) => f.title.includes(".git was re-pointed"))).toHaveLength(1);
  });

  it("a submodule the agent committed, configured to run commands, gets none run by caesar's snapshot or diff", async () => {
    const { root, marks } = hijackProject("submodule-hijacker.sh");
    const result = await runCaesar(
      ["run", "--json", "--agent", "hijacker", "--isolation", "worktree", "add a submodule"],
      { cwd: root, timeoutMs: 90_000 },
    );
    expect(result.code, result.stderr).toBe(0);
    const body = parseJsonOutput<RunJson>(result);
    expect(existsSync(join(marks, "fsmonitor-ran"))).toBe(false);
    expect(existsSync(join(marks, "filter-ran"))).toBe(false);
    // The submodule counts as the commit it records; the honest change is verified as ever.
    expect(body.report.changes.map((change) => change.path).sort()).toEqual(["changed.txt", "sub"]);
    const diff = await runCaesar(["diff", body.task_id], { cwd: root });
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout).toContain("changed.txt");
    expect(existsSync(join(marks, "fsmonitor-ran"))).toBe(false);
    expect(existsSync(join(marks, "filter-ran"))).toBe(false);
  });

  it("keeps the git configuration the environment already carries (GIT_CONFIG_COUNT…) and adds its own after it", async () => {
    const root = makeRepo({ "README.md": "x\n" });
    const worktree = join(root, ".caesar", "wt", "t_00000001");
    git(root, "worktree", "add", "-q", "--detach", worktree);
    const saved = { ...process.env };
    Object.assign(process.env, {
      GIT_CONFIG_COUNT: "1",
      GIT_CONFIG_KEY_0: "caesar.test",
      GIT_CONFIG_VALUE_0: "from the environment",
    });
    try {
      expect((await runGit(worktree, ["config", "caesar.test"])).stdout.trim()).toBe("from the environment");
      expect((await runGit(worktree, ["config", "core.fsmonitor"])).stdout.trim()).toBe("false");
    } finally {
      for (const key of ["GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0"]) {
        if (saved[key] === undefined) delete process.env[key];
        else process.env[key] = saved[key];
      }
    }
  });

  it("runs git in the project itself as before, and refuses a worktree path its project never registered", async () => {
    const root = makeRepo({ "README.md": "x\n" });
    expect(pinnedWorktreeOf(root)).toBeUndefined();
    expect((await runGit(root, ["rev-parse", "--show-toplevel"])).stdout.trim()).toBe(root);
    const forged = join(root, ".caesar", "wt", "t_00000000");
    writeFiles(forged, { ".git": `gitdir: ${join(root, ".git")}\n` });
    expect(() => pinnedWorktreeOf(forged)).toThrow(/not a worktree its project's git knows of/);
    await expect(runGit(forged, ["status"])).rejects.toMatchObject({ code: "worktree_unregistered" });
    expect((await runGit(forged, ["status"], { allowFailure: true })).code).toBe(128);
  });
});

describe("a long-lived process's knowledge of a project's git dir", () => {
  it("asks git again when the project's git dir moved (a service that ran before `git init --separate-git-dir`)", () => {
    const root = makeRepo({ "README.md": "# moved\n" });
    git(root, "worktree", "add", "-q", "--detach", join(root, ".caesar", "wt", "t1"));
    expect(pinnedWorktreeOf(join(root, ".caesar", "wt", "t1"))?.gitDir).toBe(
      join(root, ".git", "worktrees", "t1"),
    );
    const separate = join(tempDir("caesar-separate-"), "sep.git");
    git(root, "init", "-q", `--separate-git-dir=${separate}`);
    git(root, "worktree", "add", "-q", "--detach", join(root, ".caesar", "wt", "t2"));
    expect(pinnedWorktreeOf(join(root, ".caesar", "wt", "t2"))?.gitDir).toBe(
      join(separate, "worktrees", "t2"),
    );
  });

  it("finds the registration git named otherwise: a worktree elsewhere took the task's folder name first", () => {
    const root = makeRepo({ "README.md": "# a project\n" });
    // Registered first, it gets the git dir named t_0000beef; the task's worktree gets t_0000beef1.
    const elsewhere = join(tempDir("caesar-elsewhere-"), "t_0000beef");
    git(root, "worktree", "add", "-q", "--detach", elsewhere);
    const task = join(root, ".caesar", "wt", "t_0000beef");
    git(root, "worktree", "add", "-q", "--detach", task);
    const common = join(root, ".git", "worktrees");
    expect(pinnedWorktreeOf(task)?.gitDir).toBe(join(common, "t_0000beef1"));
    expect(readFileSync(join(common, "t_0000beef", "gitdir"), "utf8").trim()).toBe(join(elsewhere, ".git"));
  });
});
