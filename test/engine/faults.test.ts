import { existsSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PERSON } from "../../src/engine/lifecycle/caller.js";
import { resolvePlan } from "../../src/engine/lifecycle/plan.js";
import { parseDelegationRequest } from "../../src/engine/lifecycle/request.js";
import { createTasks } from "../../src/engine/lifecycle/start.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { git, makeRepo, readJson, taskDir, taskRecordDir, writeConfig } from "../helpers/repo.js";

// Faults a reliability tester tries: a front end killed half way through creating a task, and corrupt
// records. Each must be said, never fatal for the other tasks, and taken back by whoever finds it.

function project(config = ""): string {
  const root = makeRepo({ "README.md": "# faults\n" });
  writeConfig(root, config, ["conformant"]);
  git(root, "add", ".");
  git(root, "commit", "-qm", "config");
  return root;
}

describe("a front end killed while creating a task", () => {
  it("leaves a task that ps --all shows and gc takes back, budget place included, once two minutes old", async () => {
    const root = project("[policy]\nmax_tasks_per_hour = 5\n");
    const { plan } = await resolvePlan(
      parseDelegationRequest({ objective: "half made", agent: "conformant" }),
      {
        root,
        cwd: root,
        caller: PERSON,
      },
    );
    const [created] = await createTasks([plan]);
    const id = created!.record.id;
    // Killed after its plan and budget place, before its state: as a front end SIGKILLed there leaves it.
    rmSync(join(taskRecordDir(root, id), "state.json"));
    rmSync(join(taskDir(root, id), "state.json"));
    // Its budget place is reserved in its tree's ledger.
    const ledger = join(root, ".git", "caesar", "budgets", `${id}.json`);
    expect(readFileSync(ledger, "utf8")).toContain(id);

    const young = await runCaesar(["ps", "--all", "--json"], { cwd: root });
    expect(parseJsonOutput<{ id: string; problem?: string }[]>(young)).toContainEqual({
      id,
      phase: null,
      problem: "being created",
    });
    const kept = await runCaesar(["gc", "--json"], { cwd: root });
    expect(parseJsonOutput<{ entries: { id: string; action: string }[] }>(kept).entries).toContainEqual(
      expect.objectContaining({ id, action: "kept" }),
    );

    const past = new Date(Date.now() - 3 * 60_000);
    for (const dir of [taskDir(root, id), taskRecordDir(root, id)]) utimesSync(dir, past, past);
    const human = await runCaesar(["ps", "--all"], { cwd: root });
    expect(human.stdout).toContain(`${id}  never fully created`);
    const gc = await runCaesar(["gc", "--json"], { cwd: root });
    expect(
      parseJsonOutput<{ entries: { id: string; action: string; reason: string }[] }>(gc).entries,
    ).toContainEqual(
      expect.objectContaining({
        id,
        action: "removed",
        reason: expect.stringContaining("budget place taken back"),
      }),
    );
    if (existsSync(ledger)) expect(readJson<{ entries: unknown[] }>(ledger).entries).toEqual([]);
    expect(existsSync(taskDir(root, id))).toBe(false);
    expect(existsSync(taskRecordDir(root, id))).toBe(false);
  });
});

describe("corrupt records", () => {
  it("one unreadable task never breaks ps for the others: shown with why; one whose plan is truncated is finished, saying so", async () => {
    const root = project();
    const ids: string[] = [];
    for (const name of ["one", "two", "three"]) {
      const run = await runCaesar(["run", "--json", "--agent", "conformant", name], { cwd: root });
      ids.push(parseJsonOutput<{ task_id: string }>(run).task_id);
    }
    const [broken, abandoned, fine] = ids as [string, string, string];
    writeFileSync(join(taskRecordDir(root, broken), "state.json"), '{"version": 1, "id": "');
    // A task set back to running under a dead conductor, its plan truncated.
    const record = join(taskRecordDir(root, abandoned), "state.json");
    const state = readJson<Record<string, unknown>>(record);
    writeFileSync(record, JSON.stringify({ ...state, phase: "running", conductor: { pid: 999_999 } }));
    writeFileSync(join(taskRecordDir(root, abandoned), "plan.json"), '{"root": "');

    const ps = await runCaesar(["ps", "--all", "--json"], { cwd: root });
    expect(ps.code, ps.stderr).toBe(0);
    const rows = parseJsonOutput<{ id: string; phase: string | null; problem?: string }[]>(ps);
    expect(rows.find((row) => row.id === fine)?.phase).toBe("finished");
    expect(rows.find((row) => row.id === broken)?.problem).toMatch(/^unreadable: .*not a valid task state/);
    const status = await runCaesar(["status", fine], { cwd: root });
    expect(status.code).toBe(0);

    for (let i = 0; i < 100 && readJson<{ phase: string }>(record).phase !== "finished"; i++)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(readJson<{ phase: string; outcome: string; error: { message: string } }>(record)).toMatchObject({
      phase: "finished",
      outcome: "failed",
      error: { message: expect.stringContaining("could not conduct the task") },
    });
  });
});
