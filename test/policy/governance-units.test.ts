import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { mergeLayers } from "../../src/config/effective.js";
import { type TaskCaller, taskOfPath } from "../../src/engine/lifecycle/caller.js";
import { resolvePlan } from "../../src/engine/lifecycle/plan.js";
import { parseDelegationRequest } from "../../src/engine/lifecycle/request.js";
import { controlPaths, findGitCommonDir } from "../../src/engine/store/control.js";
import type { TaskState } from "../../src/engine/store/state.js";
import type { TaskPlan } from "../../src/engine/store/task-plan.js";
import { reserveBudget } from "../../src/policy/budget.js";
import { assertNoEscalation, type Envelope } from "../../src/policy/escalation.js";
import { formatDuration } from "../../src/support/duration.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { git, makeRepo, tempDir, writeFiles } from "../helpers/repo.js";

describe("where caesar keeps the records that decide", () => {
  it("is the git common directory, read from the files (a linked worktree shares its repository's)", () => {
    const root = makeRepo();
    expect(findGitCommonDir(root)).toBe(join(root, ".git"));
    expect(findGitCommonDir(join(root, "deep", "er"))).toBe(join(root, ".git"));
    const linked = join(tempDir(), "linked");
    git(root, "worktree", "add", "-q", linked);
    expect(findGitCommonDir(linked)).toBe(join(root, ".git"));
    expect(controlPaths(linked)).toMatchObject({ dir: join(root, ".git", "caesar"), inGit: true });
  });

  it("is .caesar/state/control outside git (documented as writable by an in-place agent)", () => {
    const plain = tempDir();
    expect(controlPaths(plain)).toMatchObject({
      dir: join(plain, ".caesar", "state", "control"),
      inGit: false,
    });
  });

  it("tells a task's worktree and task directory from the rest", () => {
    expect(taskOfPath("/p/.caesar/wt/t_1234abcd/src")).toEqual({ id: "t_1234abcd", where: "worktree" });
    expect(taskOfPath("/p/.caesar/tasks/t_1234abcd")).toEqual({ id: "t_1234abcd", where: "task directory" });
    expect(taskOfPath("/p/.caesar/state")).toBeUndefined();
    expect(taskOfPath("/p/src/.caesar/wt")).toBeUndefined();
  });
});

describe("refusal messages", () => {
  it("rounds a duration once: 59m59.6s is 1h00m, never 59m60s", () => {
    expect(formatDuration(3_599_600)).toBe("1h00m");
    expect(formatDuration(59_600)).toBe("1m00s");
    expect(formatDuration(119_500)).toBe("2m00s");
    expect(formatDuration(9_960)).toBe("10s");
    expect(formatDuration(999.6)).toBe("1.0s");
  });

  const parent: Envelope = {
    mode: "read-only",
    network: false,
    isolation: "worktree",
    timeMs: 3_599_600,
    maxTasksPerHour: null,
    maxCostPerDay: null,
    maxActionsPerHour: null,
    tools: { allowed: null, excluded: [] },
  };

  it("prints each violation once: the first in the summary, the others in the detail", () => {
    const error = (() => {
      try {
        assertNoEscalation("t_parent", { ...parent, mode: "write", timeMs: 7_200_000 }, parent);
      } catch (caught) {
        return caught as { message: string; detail: string };
      }
      throw new Error("not refused");
    })();
    expect(error.message).toBe(
      "delegation escalates beyond the parent t_parent: child mode=write exceeds parent's read-only",
    );
    const text = `${error.message}\n${error.detail}`;
    expect(text.split("child mode=write exceeds").length).toBe(2);
    expect(error.detail).toContain("also: child deadline=2h00m exceeds parent's 1h00m left");
    expect(error.detail).toContain("- mode: ask for --mode read-only");
  });

  it("tells a bounded child asking --network off of an agent caesar cannot confine what would work instead", async () => {
    const root = makeRepo();
    const config = mergeLayers([
      [
        "project",
        join(root, ".caesar", "config.toml"),
        {
          agent: [
            { id: "parent", bin: "/bin/true", args: ["{{prompt}}"], cwd_mode: "process", protocol: "oacp" },
            { id: "open", bin: "/bin/true", args: ["{{prompt}}"], cwd_mode: "process", protocol: "oacp" },
          ],
          risk_profiles: { default: { delegation_policy: { mode: "allow" } } },
          // An agent caesar cannot confine: without the OS sandbox, which would cut its network itself.
          sandbox: { mode: "off" },
        },
      ],
    ]);
    const plan = {
      mode: "read-only",
      network: false,
      isolation: "inplace",
      timeout_ms: 600_000,
      tools: { allowed: null, excluded: [] },
      kind: "root",
      budget: { tree: null, max_tasks_per_hour: null, max_cost_per_day: null },
      global_config: null,
    } as unknown as TaskPlan;
    const state = {
      id: "t_0000aaaa",
      agent: "parent",
      depth: 1,
      worktree: null,
      workspace: root,
      deadline_at: null,
    } as unknown as TaskState;
    const caller: TaskCaller = { kind: "task", id: "t_0000aaaa", dir: root, root, state, plan };
    const refused = await resolvePlan(
      parseDelegationRequest({ objective: "offline work", agent: "open", network: "off", mode: "read-only" }),
      { root, config, caller },
    ).catch((error: unknown) => error as { code: string; message: string; detail: string });
    expect(refused).toMatchObject({
      code: "delegation_escalation",
      message: "delegation escalates beyond the parent t_0000aaaa: child network=on exceeds parent's off",
    });
    const detail = (refused as { detail: string }).detail;
    expect(detail).toContain('--network off was asked, but caesar cannot cut "open"\'s network');
    expect(detail).toContain("Delegate to an agent caesar can confine instead (");
    expect(detail).toContain("codex");
    expect(detail).not.toContain("ask for --network off");
  });

  it("names no tree that does not exist when a root task is refused by max_tasks_per_hour = 0", async () => {
    const dir = tempDir();
    await expect(
      reserveBudget(
        dir,
        "t_00000001",
        ["t_00000001"],
        { max_tasks_per_hour: 0, max_cost_per_day: null },
        false,
      ),
    ).rejects.toThrow("Budget exhausted: max_tasks_per_hour = 0 allows no task in a new delegation tree.");
    const root = makeRepo();
    writeFiles(root, { ".caesar/config.toml": "[policy]\nmax_tasks_per_hour = 0\n" });
    const run = await runCaesar(["run", "--json", "--agent", "reference", "anything"], {
      cwd: root,
      env: { XDG_CONFIG_HOME: tempDir() },
    });
    const error = parseJsonOutput<{ error: { code: string; summary: string } }>(run).error;
    expect(error).toMatchObject({
      code: "budget_tasks",
      summary: "Budget exhausted: max_tasks_per_hour = 0 allows no task in a new delegation tree.",
    });
    expect(error.summary).not.toMatch(/t_[0-9a-f]{8}/);
  });
});

describe("what a person is", () => {
  it("is unaffected in their own checkout, even with caesar's records in place", async () => {
    const root = makeRepo();
    mkdirSync(join(root, ".git", "caesar"), { recursive: true });
    writeFileSync(join(root, ".git", "caesar", "note"), "x");
    const run = await runCaesar(["run", "--json", "--agent", "reference", "--mode", "read-only", "look"], {
      cwd: root,
      env: { XDG_CONFIG_HOME: tempDir() },
    });
    const out = parseJsonOutput<{ task_id?: string; error?: unknown }>(run);
    expect(out.error, run.stdout).toBeUndefined();
    expect(out.task_id).toMatch(/^t_/);
  });
});
