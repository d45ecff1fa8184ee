import { existsSync, lstatSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { adversaryProject, findingsOf, fixture, runRoot, stateOf } from "../helpers/adversary.js";
import { openApi } from "../helpers/api.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { FIXTURE_BIN, taskDir, tempDir } from "../helpers/repo.js";

// An agent writes its task directory; caesar's conductor, `status`, `ps` and `cancel` read and append to
// it. A link there is never followed (the budget ledger it points at stays caesar's), a FIFO is never
// waited on: each is moved aside unopened and recorded as a `high` finding of the task.

const CONFORMANT = join(FIXTURE_BIN, "conformant.sh");
const UNSAFE = "unsafe_task_file";

function quarantined(dir: string, name: string): string[] {
  return readdirSync(dir).filter((entry) => entry.startsWith(`${name}.quarantined-`));
}

async function until<T>(what: string, probe: () => T | undefined | false, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe("an agent links events.jsonl to its tree's budget ledger", () => {
  it("caesar appends through no link: the ledger stays a ledger, the link is moved aside, a high finding", async () => {
    const { root, env } = adversaryProject("[policy]\nmax_tasks_per_hour = 5\n", {
      attacker: fixture("unsafe-files"),
      other: CONFORMANT,
    });
    const { id } = await runRoot(root, env, ["--agent", "attacker", '{"attack":"ledger","other":"other"}']);
    const dir = taskDir(root, id);
    const attempt = JSON.parse(readFileSync(join(dir, "attempt.json"), "utf8"));
    expect(attempt.refused.code).toBe("delegation_forbidden");
    const ledger = JSON.parse(readFileSync(attempt.ledger, "utf8"));
    expect(ledger.entries.map((entry: { task_id: string }) => entry.task_id)).toEqual([id]);
    expect(readFileSync(attempt.ledger, "utf8")).not.toContain("caesar.event");
    // events.jsonl is caesar's own again; the agent's link is kept aside, unfollowed.
    expect(lstatSync(join(dir, "events.jsonl")).isFile()).toBe(true);
    const moved = quarantined(dir, "events.jsonl");
    expect(moved.length).toBeGreaterThan(0);
    expect(lstatSync(join(dir, moved[0]!)).isSymbolicLink()).toBe(true);
    const finding = findingsOf(root, id).find((f) => f.detail?.includes(UNSAFE));
    expect(finding, JSON.stringify(findingsOf(root, id))).toMatchObject({ severity: "high" });
    expect(finding!.detail).toContain("events.jsonl");
  }, 300_000);
});

describe("an agent links the log of a check at a file of the person's", () => {
  it("caesar writes the check's output to a log of its own: the person's file is untouched", async () => {
    const { root, env } = adversaryProject("", { attacker: fixture("unsafe-files"), other: CONFORMANT });
    const victim = join(tempDir("caesar-victim-"), "notes.txt");
    writeFileSync(victim, "the person's notes\n");
    const objective = JSON.stringify({ attack: "check-log", victim });
    const { id } = await runRoot(root, env, ["--agent", "attacker", "--check", "echo checked", objective]);
    expect(readFileSync(victim, "utf8")).toBe("the person's notes\n");
    const checks = join(taskDir(root, id), "checks");
    expect(readFileSync(join(checks, "1-1.log"), "utf8")).toContain("checked");
    expect(quarantined(checks, "1-1.log")).toHaveLength(1);
    expect(findingsOf(root, id).find((f) => f.detail?.includes(UNSAFE))).toMatchObject({ severity: "high" });
  }, 300_000);
});

describe("an agent puts FIFOs where state.json, report.json and a question are", () => {
  it("the server, status, ps and cancel answer, and the conductor ends the task (nothing waits on a FIFO)", async () => {
    const { root, env } = adversaryProject("", { attacker: fixture("unsafe-files"), other: CONFORMANT });
    const started = await runCaesar(
      ["run", "--json", "--detach", "--agent", "attacker", '{"attack":"fifo","hold_ms":120000}'],
      { cwd: root, env },
    );
    const id = parseJsonOutput<{ task_id: string }>(started).task_id;
    expect(id, started.stderr).toBeTruthy();
    const dir = taskDir(root, id);
    await until("the FIFOs", () => existsSync(join(dir, "fifos-ready")));

    // The server first (in process: a hang here would hang the test, and time out).
    const api = await openApi(root);
    try {
      const page = await api.request(`/api/tasks/${id}`);
      expect(page.status).toBe(200);
      expect((await api.request("/api/tasks")).status).toBe(200);
    } finally {
      api.close();
    }

    const status = await runCaesar(["status", id, "--json"], { cwd: root, env, timeoutMs: 30_000 });
    expect(status.code, status.stderr).toBe(0);
    const ps = await runCaesar(["ps", "--json"], { cwd: root, env, timeoutMs: 30_000 });
    expect(ps.code, ps.stderr).toBe(0);
    expect(ps.stdout).toContain(id);
    const cancelled = await runCaesar(["cancel", id, "--json"], { cwd: root, env, timeoutMs: 60_000 });
    expect(cancelled.code, cancelled.stderr).toBe(0);

    const state = await until("the task's end", () => {
      const current = stateOf(root, id);
      return current.phase === "finished" ? current : undefined;
    });
    expect(state.outcome).toBe("cancelled");
    for (const name of ["state.json", "report.json"]) {
      if (existsSync(join(dir, name))) expect(lstatSync(join(dir, name)).isFIFO()).toBe(false);
    }
    expect(quarantined(join(dir, "questions"), "q_fifo0001.json").length).toBe(1);
    const findings = findingsOf(root, id).filter((f) => f.detail?.includes(UNSAFE));
    expect(findings.length, JSON.stringify(findingsOf(root, id))).toBeGreaterThan(0);
    expect(findings.every((f) => f.severity === "high")).toBe(true);
  }, 300_000);
});
