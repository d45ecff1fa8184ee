import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { type CliResult, parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { git, makeRepo, readJson, taskDir, writeConfig } from "../helpers/repo.js";

/**
 * Many tasks at once in one repository, as users run them: worktree and in-place, read-only and write,
 * some failing, while `caesar apply` and `caesar gc` run meanwhile. Every task must end in a final state
 * with the report its agent gave, and nothing may be left behind: no orphan worktree, branch or lock.
 */

interface Spec {
  name: string;
  agent: string;
  args: string[];
  env?: Record<string, string>;
  /** What its report must say. */
  expect: { outcome: string; status: string; source: string; own?: string };
  kind: "worktree-write" | "worktree-read" | "inplace-read" | "inplace-write" | "failing";
}

interface State {
  id: string;
  phase: string;
  outcome: string | null;
  worktree: string | null;
  branch: string | null;
  cleaned_at: string | null;
  applied: { files: string[] } | null;
  error: { code: string; message: string } | null;
  report: {
    status: string;
    summary: string;
    report_source: string;
    changes: { path: string; action: string }[];
    findings: { severity: string; title: string }[];
  } | null;
}

function specs(): Spec[] {
  const list: Spec[] = [];
  const success = { outcome: "succeeded", status: "success", source: "file" };
  for (let i = 0; i < 6; i++)
    list.push({
      name: `wt-write-${i}`,
      agent: "writer",
      args: [],
      env: { WRITE_FILE: `wt-${i}.txt` },
      expect: { ...success, own: `wt-${i}.txt` },
      kind: "worktree-write",
    });
  for (let i = 0; i < 4; i++)
    list.push({
      name: `wt-read-${i}`,
      agent: "conformant",
      args: ["--isolation", "worktree", "--mode", "read-only"],
      expect: success,
      kind: "worktree-read",
    });
  for (let i = 0; i < 5; i++)
    list.push({
      name: `in-read-${i}`,
      agent: "conformant",
      args: ["--isolation", "inplace", "--mode", "read-only"],
      expect: success,
      kind: "inplace-read",
    });
  for (let i = 0; i < 3; i++)
    list.push({
      name: `in-write-${i}`,
      agent: "writer",
      args: ["--isolation", "inplace"],
      env: { WRITE_FILE: `in-${i}.txt` },
      expect: { ...success, own: `in-${i}.txt` },
      kind: "inplace-write",
    });
  for (let i = 0; i < 2; i++)
    list.push({
      name: `crash-${i}`,
      agent: "crash",
      args: [],
      expect: { outcome: "failed", status: "failed", source: "synthesized" },
      kind: "failing",
    });
  return list;
}

/** A repository whose .gitignore knows nothing of caesar: its folders are plain untracked files to git. */
function project(): string {
  const root = makeRepo({ "README.md": "# stress\n" });
  writeFileSync(join(root, ".gitignore"), "");
  writeConfig(root, "[policy]\nmax_parallel = 6\nallow_inplace_write = true\n", [
    "conformant",
    "writer",
    "crash",
  ]);
  git(root, "add", ".");
  git(root, "commit", "-qm", "caesar config, no ignores");
  return root;
}

function readState(root: string, id: string): State | undefined {
  try {
    return readJson<State>(join(taskDir(root, id), "state.json"));
  } catch {
    return undefined; // being replaced at this instant
  }
}

/** Every path under `dir` (relative), for finding what was left behind. */
function walk(dir: string, base = dir): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? [relative(base, path), ...walk(path, base)] : [relative(base, path)];
  });
}

describe("twenty tasks at once in one repository", () => {
  it("all end with the right report while apply and gc run, leaving no orphan worktree, branch or lock", {
    timeout: 300_000,
  }, async () => {
    const root = project();
    const all = specs();
    const started = await Promise.all(
      all.map(async (spec) => {
        const result: CliResult = await runCaesar(
          ["run", "--detach", "--json", "--agent", spec.agent, ...spec.args, spec.name],
          { cwd: root, env: spec.env ?? {}, timeoutMs: 180_000 },
        );
        expect(result.code, `${spec.name}: ${result.stderr}${result.stdout}`).toBe(0);
        return { spec, id: parseJsonOutput<{ task_id: string }>(result).task_id };
      }),
    );
    const byId = new Map(started.map(({ spec, id }) => [id, spec]));

    // Meanwhile: apply each finished worktree write as soon as it is there, and gc, over and over.
    const applied = new Set<string>();
    const worktreeWriteCount = all.filter((spec) => spec.kind === "worktree-write").length;
    const sideResults: CliResult[] = [];
    const deadline = Date.now() + 240_000;
    for (;;) {
      const states = started.map(({ id }) => readState(root, id));
      const allFinished = states.every((state) => state?.phase === "finished");
      // Done once every task finished and every worktree write was applied: which tasks finish first is the
      // scheduler's choice (on a loaded machine the worktree writes can be the last), so some applies may
      // come after the last task — gc, though, runs from the first moment.
      if (allFinished && applied.size === worktreeWriteCount) break;
      if (Date.now() > deadline) {
        const stuck = started.filter((_, i) => states[i]?.phase !== "finished").map(({ id }) => id);
        throw new Error(`tasks not finished in time: ${stuck.join(", ")}`);
      }
      const ready = started.find(
        ({ id, spec }, i) =>
          spec.kind === "worktree-write" && states[i]?.phase === "finished" && !applied.has(id),
      );
      const moves: Promise<CliResult>[] = [runCaesar(["gc", "--json"], { cwd: root, timeoutMs: 120_000 })];
      if (ready) {
        applied.add(ready.id);
        moves.push(runCaesar(["apply", ready.id, "--json"], { cwd: root, timeoutMs: 120_000 }));
      }
      sideResults.push(...(await Promise.all(moves)));
      await sleep(200);
    }
    for (const result of sideResults) expect(result.code, result.stderr + result.stdout).toBe(0);
    expect(applied.size).toBe(worktreeWriteCount);

    // Every task: a final state, the report its agent gave, and nothing of caesar's among its changes.
    const inPlaceWrites = all.filter((s) => s.kind === "inplace-write").map((s) => s.expect.own!);
    const worktreeWrites = all.filter((s) => s.kind === "worktree-write").map((s) => s.expect.own!);
    for (const { id, spec } of started) {
      const state = readState(root, id)!;
      const where = `${spec.name} (${id}): ${JSON.stringify(state.error)} ${state.report?.summary}`;
      expect(state.phase, where).toBe("finished");
      expect(state.outcome, where).toBe(spec.expect.outcome);
      expect(state.report?.status, where).toBe(spec.expect.status);
      expect(state.report?.report_source, where).toBe(spec.expect.source);
      const paths = state.report!.changes.map((change) => change.path);
      expect(
        paths.filter((path) => path.includes(".caesar")),
        where,
      ).toEqual([]);
      switch (spec.kind) {
        case "worktree-write":
          expect(paths, where).toEqual([spec.expect.own]);
          break;
        case "worktree-read":
          expect(paths, where).toEqual([]);
          break;
        case "inplace-write":
          expect(paths, where).toContain(spec.expect.own);
          break;
        case "failing":
          expect(state.report?.summary, where).toContain("exited with code 3: about to crash");
          expect(paths, where).toEqual(["half-done.txt"]);
          break;
      }
      // In place, the work tree is shared: only other in-place writers' files and applied ones may show.
      if (spec.kind.startsWith("inplace"))
        for (const path of paths) expect([...inPlaceWrites, ...worktreeWrites], where).toContain(path);
    }
    for (const id of applied) {
      const file = byId.get(id)!.expect.own!;
      expect(readFileSync(join(root, file), "utf8")).toContain("written by the fixture agent");
    }

    // No orphan: every caesar worktree and branch left belongs to a task that keeps it (unapplied work).
    const states = started.map(({ id }) => readState(root, id)!);
    const kept = states.filter((state) => state.worktree && !state.cleaned_at);
    const worktrees = git(root, "worktree", "list", "--porcelain")
      .split("\n")
      .filter((line) => line.startsWith("worktree ") && line.includes(join(".caesar", "wt")))
      .map((line) => line.slice("worktree ".length));
    expect(worktrees.sort()).toEqual(kept.map((state) => state.worktree!).sort());
    const branches = git(root, "branch", "--list", "--format=%(refname:short)", "caesar/*")
      .split("\n")
      .filter(Boolean);
    expect(branches.sort()).toEqual(kept.map((state) => state.branch!).sort());
    for (const state of states.filter((s) => s.cleaned_at)) expect(existsSync(state.worktree!)).toBe(false);

    // And gc --force leaves no worktree, no branch; no lock and no slot anywhere.
    const force = await runCaesar(["gc", "--force", "--json"], { cwd: root, timeoutMs: 120_000 });
    expect(force.code, force.stderr).toBe(0);
    expect(git(root, "branch", "--list", "caesar/*")).toBe("");
    expect(git(root, "worktree", "list", "--porcelain")).not.toContain(join(".caesar", "wt"));
    expect(readdirSync(join(root, ".caesar", "wt"))).toEqual([]);
    const leftovers = walk(join(root, ".caesar")).filter(
      (path) => /\.lock($|\.|\/)/.test(path) || path.startsWith(`${join("state", "slots")}/`),
    );
    expect(leftovers).toEqual([]);
  });
});
