import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isProcessAlive } from "../../src/support/process.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { git, makeRepo, readJson, taskDir, taskRecordDir, writeConfig, writeFiles } from "../helpers/repo.js";

interface StateJson {
  id: string;
  phase: string;
  outcome: string | null;
  conductor: { pid: number } | null;
  agent_process: { pid: number } | null;
  waiting_for_slot: { task_id: string }[] | null;
  error: { code: string; message: string } | null;
  applied: { files: string[] } | null;
  report: { status: string; changes: { path: string }[] } | null;
}

const FIXTURES = ["conformant", "writer", "hang"];

function project(config = ""): string {
  const root = makeRepo({ "README.md": "# project\n" });
  writeConfig(root, config, FIXTURES);
  git(root, "add", ".caesar/config.toml");
  git(root, "commit", "-qm", "caesar config");
  return root;
}

async function detach(root: string, args: string[]): Promise<string> {
  // Room for a service killed while it takes the task, and another started, on a loaded machine.
  const result = await runCaesar(["run", "--detach", "--json", ...args], { cwd: root, timeoutMs: 120_000 });
  expect(result.code, result.stderr + result.stdout).toBe(0);
  const id = parseJsonOutput<{ task_id: string }>(result).task_id;
  // `run --detach` returns once a conductor has claimed the task: its pid is in the state already.
  expect(state(root, id).conductor?.pid).toBeGreaterThan(0);
  return id;
}

/**
 * A task's state as caesar decides from it: its record (the mirror in the task directory is written just
 * after, and a reader racing a command's return may see the one before).
 */
function state(root: string, id: string): StateJson {
  const record = join(taskRecordDir(root, id), "state.json");
  return readJson<StateJson>(existsSync(record) ? record : join(taskDir(root, id), "state.json"));
}

function stateIfAny(root: string, id: string): StateJson | undefined {
  try {
    return state(root, id);
  } catch {
    return undefined;
  }
}

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A process that has not ended (a zombie waiting for a slow init to reap it has). */
function alive(pid: number): boolean {
  return isProcessAlive(pid);
}

describe("slots", () => {
  it("caps running tasks at max_parallel, says who holds the slots, and hands the slot over", async () => {
    const root = project("[policy]\nmax_parallel = 1\n");
    const first = await detach(root, ["--agent", "hang", "--timeout", "60s", "hold the slot"]);
    await until("the first task to run", () => state(root, first).phase === "running");
    const follower = runCaesar(["run", "--agent", "conformant", "wait my turn"], { cwd: root });
    const second = await until("the second task", () => {
      const ids = spawnSync("ls", [join(root, ".caesar", "tasks")], { encoding: "utf8" })
        .stdout.split("\n")
        .filter(Boolean);
      return ids.find((id) => id !== first);
    });
    const waiting = await until(
      "the second task to wait",
      () => stateIfAny(root, second)?.waiting_for_slot ?? undefined,
    );
    expect(waiting.map((h) => h.task_id)).toEqual([first]);
    await runCaesar(["cancel", first], { cwd: root });
    const result = await follower;
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(first); // the wait line named the holder
    expect(state(root, second).outcome).toBe("succeeded");
  });

  it("reclaims a slot whose holder died", async () => {
    const root = project("[policy]\nmax_parallel = 1\n");
    const dead = spawnSync("true").pid!;
    mkdirSync(join(root, ".caesar", "state", "slots"), { recursive: true });
    writeFileSync(
      join(root, ".caesar", "state", "slots", "0.json"),
      JSON.stringify({ pid: dead, task_id: "t_gone", since: "x" }),
    );
    const result = await runCaesar(["run", "--json", "--agent", "conformant", "go"], {
      cwd: root,
      timeoutMs: 30_000,
    });
    expect(result.code).toBe(0);
  });
});

describe("cancel", () => {
  it("stops the agent's whole process group and records the task as cancelled", async () => {
    const root = project();
    const id = await detach(root, ["--agent", "hang", "run forever"]);
    const running = await until("the agent to start", () => state(root, id).agent_process ?? undefined);
    const result = await runCaesar(["cancel", id, "--json"], { cwd: root });
    expect(parseJsonOutput<{ cancelled: boolean; outcome: string }>(result)).toMatchObject({
      cancelled: true,
      outcome: "cancelled",
    });
    expect(alive(running.pid)).toBe(false);
    expect(state(root, id).report?.status).toBe("failed");
    // A cancel is said like any other ending: one `error` event, then `finished`, and the same words.
    const events = readFileSync(join(taskDir(root, id), "events.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; code?: string; message?: string });
    expect(events.filter((e) => e.type === "error").map((e) => e.code)).toEqual(["cancelled"]);
    expect(events.slice(-2).map((e) => e.type)).toEqual(["error", "finished"]);
    expect(state(root, id).error).toEqual({ code: "cancelled", message: events.at(-2)!.message });
    expect(state(root, id).error?.message).toMatch(
      /^Agent "hang" was cancelled after .* \(cancel requested by cli\)/,
    );
    const again = await runCaesar(["cancel", id], { cwd: root });
    expect(again.stdout).toContain("already finished");
    expect(state(root, id).outcome).toBe("cancelled");
  });
});

describe("the conductor service killed with -9", () => {
  it("leaves the agent running; the next command that looks starts a service, which takes it over", async () => {
    const root = project();
    const id = await detach(root, ["--agent", "hang", "outlive the conductor"]);
    const agent = await until("the agent to start", () => state(root, id).agent_process ?? undefined);
    const conductor = state(root, id).conductor!.pid;
    process.kill(conductor, "SIGKILL");
    await until("the conductor to die", () => !alive(conductor));
    expect(alive(agent.pid)).toBe(true);
    const ps = await runCaesar(["ps", "--json"], { cwd: root });
    const row = parseJsonOutput<{ id: string; phase: string }[]>(ps).find((r) => r.id === id);
    expect(row?.phase).toBe("running");
    const taken = await until("a new conductor", () => {
      const pid = state(root, id).conductor?.pid;
      return pid !== undefined && pid !== conductor ? pid : undefined;
    });
    expect(alive(taken)).toBe(true);
    expect(state(root, id).agent_process?.pid).toBe(agent.pid);
    expect(alive(agent.pid)).toBe(true);
    const cancelled = await runCaesar(["cancel", id, "--json"], { cwd: root });
    expect(parseJsonOutput<{ outcome: string }>(cancelled).outcome).toBe("cancelled");
    expect(alive(agent.pid)).toBe(false);
    const events = readFileSync(join(taskDir(root, id), "events.jsonl"), "utf8");
    expect(events.match(/"type":"started"/g)).toHaveLength(1);
    expect(events.match(/"type":"finished"/g)).toHaveLength(1);
    expect(events).toContain("the conductor service took over hang");
  });
});

describe("the conductor service killed with -9 while it makes the worktree", () => {
  it("starts the task again from scratch (no agent ran), leaving no half-made worktree or branch", async () => {
    const root = project();
    // git runs post-checkout inside `git worktree add`: the hook kills the conductor (git's parent) there,
    // once, after the worktree exists and before the conductor can record it.
    const hooks = join(root, ".git", "hooks");
    const killed = join(root, ".git", "killed-once");
    writeFileSync(
      join(hooks, "post-checkout"),
      `#!/bin/sh
case "$PWD" in */.caesar/wt/*) [ -e "${killed}" ] && exit 0; read -r _ _ _ conductor _ < "/proc/$PPID/stat"; echo "$conductor" > "${killed}"; kill -9 "$conductor" ;; esac\n`,
      { mode: 0o755 },
    );
    const id = await detach(root, ["--agent", "conformant", "die while isolating"]);
    // The service the hook killed (the one that took the task, or — on a slow machine — one that took it
    // in its first scan, before the front end heard it answer, and another was started).
    const dying = await until("the hook to kill the service", () =>
      existsSync(killed) ? Number(readFileSync(killed, "utf8").trim()) || undefined : undefined,
    );
    await until("the conductor to die", () => !alive(dying));
    const ps = await runCaesar(["ps", "--json"], { cwd: root });
    expect(ps.code, ps.stderr).toBe(0);
    await until("the task to finish", () => state(root, id).phase === "finished");
    expect(state(root, id)).toMatchObject({ outcome: "succeeded", report: { status: "success" } });
    const worktrees = git(root, "worktree", "list", "--porcelain")
      .split("\n")
      .filter((line) => line.startsWith("worktree ") && line.includes(join(".caesar", "wt")));
    expect(worktrees).toEqual([`worktree ${join(root, ".caesar", "wt", id)}`]);
    expect(git(root, "branch", "--list", "caesar/*").split("\n")).toHaveLength(1);
    const gc = await runCaesar(["gc", "--json"], { cwd: root });
    expect(parseJsonOutput<{ entries: { id: string; action: string }[] }>(gc).entries).toEqual([
      expect.objectContaining({ id, action: "removed" }),
    ]);
    expect(git(root, "branch", "--list", "caesar/*")).toBe("");
    // Several waits of 30 s each: on a loaded machine, let the one that runs out say which it was.
  }, 150_000);
});

describe("a conductor that died near the end", () => {
  /** A real finished task, set back to a moment its conductor died, then finished after `caesar ps`. */
  async function diedIn(phase: "finishing" | "running", forgeFinished = false) {
    const root = project();
    const run = await runCaesar(["run", "--json", "--agent", "conformant", "finish me"], { cwd: root });
    const { task_id: id } = parseJsonOutput<{ task_id: string }>(run);
    const dead = spawnSync("true").pid;
    const dir = taskDir(root, id);
    const final = JSON.parse(readFileSync(join(dir, "state.json"), "utf8"));
    const back = { phase, outcome: null, report_status: null, report: null, finished_at: null };
    // caesar's own record is what counts (the task directory only mirrors it): set both back.
    const died = JSON.stringify({ ...final, ...back, conductor: { pid: dead } });
    writeFileSync(join(taskRecordDir(root, id), "state.json"), died);
    writeFileSync(join(dir, "state.json"), died);
    const lines = readFileSync(join(dir, "events.jsonl"), "utf8").trim().split("\n");
    if (phase === "running") lines.pop(); // it died before writing its finished event
    if (forgeFinished) {
      const last = JSON.parse(lines.at(-1)!);
      lines.push(
        JSON.stringify({
          ...last,
          seq: last.seq + 1,
          type: "finished",
          status: "success",
          summary: "forged",
          outcome: "succeeded",
        }),
      );
    }
    writeFileSync(join(dir, "events.jsonl"), `${lines.join("\n")}\n`);
    // `ps` hands the task to the project's conductor service, which finishes it: nothing can be taken
    // over (the agent's run is over, caesar's record of it gone).
    const ps = await runCaesar(["ps", "--json"], { cwd: root });
    expect(ps.code, ps.stderr).toBe(0);
    await until("the task to be finished", () => state(root, id).phase === "finished");
    const events = readFileSync(join(dir, "events.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    return { state: state(root, id), events };
  }

  it("after its finished event, before its final state: finished without a second finished event", async () => {
    const { state: final, events } = await diedIn("finishing");
    expect(final).toMatchObject({ phase: "finished", outcome: "failed" });
    expect(final.error?.code).toBe("conductor_died");
    expect(events.filter((e) => e.type === "finished")).toHaveLength(1);
    expect(events.at(-1).type).toBe("finished");
  });

  it("while its agent ran: a finished event the agent wrote does not stand for the engine's", async () => {
    const { state: final, events } = await diedIn("running", true);
    expect(final).toMatchObject({ phase: "finished", outcome: "failed" });
    expect(events.at(-1)).toMatchObject({ type: "finished", outcome: "failed" });
    expect(events.at(-1).summary).not.toBe("forged");
  });
});

describe("apply", () => {
  it("refuses, changing nothing, when it would overwrite the user's uncommitted work, then applies staged", async () => {
    const root = project();
    const run = await runCaesar(["run", "--json", "--agent", "writer", "write out.txt"], { cwd: root });
    const id = parseJsonOutput<{ task_id: string }>(run).task_id;
    writeFiles(root, { "out.txt": "my own work\n" });
    const refused = await runCaesar(["apply", id, "--json"], { cwd: root });
    expect(refused.code).toBe(1);
    expect(parseJsonOutput<{ error: { code: string; detail: string } }>(refused).error).toMatchObject({
      code: "apply_would_overwrite",
    });
    expect(readFileSync(join(root, "out.txt"), "utf8")).toBe("my own work\n");
    spawnSync("rm", [join(root, "out.txt")]);
    const applied = await runCaesar(["apply", id], { cwd: root });
    expect(applied.code, applied.stderr).toBe(0);
    expect(git(root, "status", "--porcelain")).toBe("A  out.txt");
    expect(state(root, id).applied?.files).toEqual(["out.txt"]);
    const twice = await runCaesar(["apply", id, "--json"], { cwd: root });
    expect(parseJsonOutput<{ error: { code: string } }>(twice).error.code).toBe("already_applied");
  });

  it("finishes an apply killed after git applied the change: the next apply records it, changing nothing", async () => {
    const root = project();
    const run = await runCaesar(["run", "--json", "--agent", "writer", "write out.txt"], { cwd: root });
    const id = parseJsonOutput<{ task_id: string }>(run).task_id;
    // What a killed apply leaves: git applied the change to the index and the work tree; caesar recorded nothing.
    const diff = await runCaesar(["diff", id], { cwd: root });
    const staged = spawnSync("git", ["apply", "--index", "-"], { cwd: root, input: diff.stdout });
    expect(staged.status, String(staged.stderr)).toBe(0);
    expect(state(root, id).applied).toBeNull();
    const applied = await runCaesar(["apply", id], { cwd: root });
    expect(applied.code, applied.stderr).toBe(0);
    expect(git(root, "status", "--porcelain")).toBe("A  out.txt");
    expect(state(root, id).applied?.files).toEqual(["out.txt"]);
  });

  it("names a tracked file with uncommitted changes whole when it refuses (not `EADME.md`)", async () => {
    const root = project();
    const run = await runCaesar(["run", "--json", "--agent", "writer", "write"], {
      cwd: root,
      env: { WRITE_FILE: "README.md" },
    });
    const id = parseJsonOutput<{ task_id: string }>(run).task_id;
    writeFiles(root, { "README.md": "# my uncommitted edit\n" });
    const refused = await runCaesar(["apply", id, "--json"], { cwd: root });
    const error = parseJsonOutput<{ error: { code: string; detail: string } }>(refused).error;
    expect(error.code).toBe("apply_would_overwrite");
    expect(error.detail).toContain("also changed:\n  README.md\nCommit or stash");
  });

  it("refuses a change that conflicts with the user's newer commits, changing nothing", async () => {
    const root = project();
    const run = await runCaesar(["run", "--json", "--agent", "writer", "write"], {
      cwd: root,
      env: { WRITE_FILE: "README.md" },
    });
    const id = parseJsonOutput<{ task_id: string }>(run).task_id;
    writeFiles(root, { "README.md": "# project, edited by the user\n" });
    git(root, "commit", "-qam", "user edit");
    const refused = await runCaesar(["apply", id, "--json"], { cwd: root });
    const error = parseJsonOutput<{ error: { code: string; detail: string } }>(refused).error;
    expect(error.code).toBe("apply_conflict");
    expect(error.detail).toContain("README.md");
    expect(git(root, "status", "--porcelain")).toBe("");
  });

  it("merges cleanly over unrelated newer commits", async () => {
    const root = project();
    const run = await runCaesar(["run", "--json", "--agent", "writer", "write"], { cwd: root });
    const id = parseJsonOutput<{ task_id: string }>(run).task_id;
    writeFiles(root, { "other.txt": "user\n" });
    git(root, "add", "other.txt");
    git(root, "commit", "-qm", "user commit");
    const applied = await runCaesar(["apply", id], { cwd: root });
    expect(applied.code, applied.stderr).toBe(0);
    expect(readFileSync(join(root, "out.txt"), "utf8")).toContain("fixture agent");
  });
});

describe("gc", () => {
  it("keeps unapplied work, removes applied tasks' worktrees and branches, and diff still works after", async () => {
    const root = project();
    const run = await runCaesar(["run", "--json", "--agent", "writer", "write"], { cwd: root });
    const id = parseJsonOutput<{ task_id: string; state: { worktree: string; branch: string } }>(run);
    const kept = await runCaesar(["gc", "--json"], { cwd: root });
    expect(parseJsonOutput<{ entries: { id: string; action: string }[] }>(kept).entries).toEqual([
      expect.objectContaining({ id: id.task_id, action: "kept" }),
    ]);
    expect(existsSync(id.state.worktree)).toBe(true);
    const dry = await runCaesar(["gc", "--dry-run", "--force", "--json"], { cwd: root });
    expect(parseJsonOutput<{ entries: { action: string }[] }>(dry).entries[0]?.action).toBe("would-remove");
    expect(existsSync(id.state.worktree)).toBe(true);
    await runCaesar(["apply", id.task_id], { cwd: root });
    const removed = await runCaesar(["gc", "--json"], { cwd: root });
    expect(parseJsonOutput<{ entries: { action: string }[] }>(removed).entries[0]?.action).toBe("removed");
    expect(existsSync(id.state.worktree)).toBe(false);
    expect(git(root, "branch", "--list", id.state.branch)).toBe("");
    const diff = await runCaesar(["diff", id.task_id], { cwd: root });
    expect(diff.stdout).toContain("+written by the fixture agent");
  });
});

describe("following", () => {
  it("status, logs and logs --json read the task's files", async () => {
    const root = project();
    const run = await runCaesar(
      ["run", "--json", "--agent", "reference", 'create notes.txt containing "hi"'],
      { cwd: root },
    );
    const id = parseJsonOutput<{ task_id: string }>(run).task_id;
    const status = await runCaesar(["status", id.slice(2, 6)], { cwd: root });
    expect(status.stdout).toContain(id);
    expect(status.stdout).toContain("success");
    const logs = await runCaesar(["logs", id], { cwd: root });
    expect(logs.stdout).toMatch(/^tool\s+[▸>] edit_file/m);
    const ndjson = await runCaesar(["logs", id, "--json"], { cwd: root });
    const types = ndjson.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line).type);
    expect(types[0]).toBe("started");
    expect(types).toContain("tool_use");
    expect(types.at(-1)).toBe("finished");
    const raw = await runCaesar(["logs", id, "--raw"], { cwd: root });
    expect(raw.code).toBe(0);
  });

  it("an unknown task id says how to list tasks", async () => {
    const root = project();
    const result = await runCaesar(["status", "t_nope", "--json"], { cwd: root });
    expect(result.code).toBe(1);
    expect(parseJsonOutput<{ error: { code: string; detail: string } }>(result).error).toMatchObject({
      code: "task_not_found",
      detail: expect.stringContaining("caesar ps"),
    });
  });

  it("refuses a task id that could escape the store", async () => {
    const root = project();
    const result = await runCaesar(["status", "../../etc", "--json"], { cwd: root });
    expect(result.code).toBe(2);
    expect(parseJsonOutput<{ error: { code: string } }>(result).error.code).toBe("invalid_task_id");
  });
});

describe("caesar demo", () => {
  it("runs the bundled agent in a throwaway repository, offline, and shows the verified diff", async () => {
    const result = await runCaesar(["demo"], { timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("success");
    expect(result.stdout).toContain('+  return "Hello, " + name + "!";');
    expect(result.stdout).toContain("CHANGELOG.md");
  });
});
