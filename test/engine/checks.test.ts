import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isProcessAlive } from "../../src/support/process.js";
import { CAESAR_BIN, parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { besidesSandbox } from "../helpers/findings.js";
import { makeRepo, readJson, taskDir, writeConfig } from "../helpers/repo.js";

interface Check {
  command: string;
  exit_code: number | null;
  duration_ms: number;
  passed: boolean;
  output_tail: string;
  timed_out?: boolean;
  error?: string;
  output_bytes?: number;
  log?: string;
  from?: string;
}

interface RunJson {
  task_id: string;
  state: {
    outcome: string;
    worktree: string | null;
    workspace: string;
    check_process: { pid: number } | null;
  };
  report: {
    status: string;
    summary: string;
    findings: { severity: string; title: string; detail?: string }[];
    checks: Check[];
    attempts: {
      attempt: number;
      how: string;
      outcome: string;
      checks: Check[];
      checks_passed: boolean | null;
    }[];
  };
}

const FIXTURES = ["writer", "fixer", "conformant", "nested", "hang"];

/** A repository whose test (`sh test.sh`) passes only once value.txt says "fixed". */
function project(config = ""): string {
  const root = makeRepo({ "test.sh": "grep -q fixed value.txt\n", "value.txt": "broken\n" });
  writeConfig(root, config, FIXTURES);
  return root;
}

async function run(root: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const result = await runCaesar(["run", "--json", ...args], { cwd: root, env, timeoutMs: 120_000 });
  return { result, body: result.code === 2 ? undefined : parseJsonOutput<RunJson>(result) };
}

function events(root: string, id: string): Record<string, unknown>[] {
  return readFileSync(join(taskDir(root, id), "events.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("checks after the agent", () => {
  it("run in the task's worktree; a failing one turns a success report partial, quotes its output, and fails `caesar run`", async () => {
    const root = project();
    const { result, body } = await run(root, [
      "--agent",
      "writer",
      "--check",
      "test -f out.txt",
      "--check",
      "echo looking at out.txt; grep -q nonsense out.txt",
      "write out.txt",
    ]);
    expect(result.code).toBe(1);
    const report = body!.report;
    expect(report.status).toBe("partial");
    expect(report.summary).toBe("wrote out.txt");
    const [first, second] = report.checks;
    // out.txt exists only in the worktree: the first check passing proves where the checks ran.
    expect(existsSync(join(root, "out.txt"))).toBe(false);
    expect(first).toMatchObject({ command: "test -f out.txt", exit_code: 0, passed: true, from: "request" });
    expect(second).toMatchObject({ exit_code: 1, passed: false, log: "checks/1-2.log" });
    expect(second!.output_tail).toContain("looking at out.txt");
    const high = besidesSandbox(report.findings).filter((finding) => finding.severity === "high");
    expect(high.map((finding) => finding.title)).toEqual([
      "Check failed: `echo looking at out.txt; grep -q nonsense out.txt` (exit code 1 after " +
        `${(second!.duration_ms / 1000).toFixed(1)}s)`,
    ]);
    expect(high[0]!.detail).toContain("looking at out.txt");
    expect(report.findings.map((finding) => finding.title)).toContain(
      "The report says success, but 1 of 2 check(s) failed: it is partial",
    );
    // One attempt, recorded; the kept output; each check as a tool in the event stream.
    expect(report.attempts).toHaveLength(1);
    expect(report.attempts[0]).toMatchObject({
      attempt: 1,
      how: "first",
      outcome: "succeeded",
      checks_passed: false,
    });
    const dir = taskDir(root, body!.task_id);
    expect(readFileSync(join(dir, "checks", "1-2.log"), "utf8")).toBe("looking at out.txt\n");
    const checkEvents = events(root, body!.task_id).filter((event) => event.tool === "check");
    expect(checkEvents.map((event) => [event.id, event.status])).toEqual([
      ["check-1-1", "started"],
      ["check-1-1", "succeeded"],
      ["check-1-2", "started"],
      ["check-1-2", "failed"],
    ]);
    const finished = events(root, body!.task_id).at(-1)!;
    expect(finished).toMatchObject({ type: "finished", status: "partial" });
  });

  it("every check passing: success, exit 0, and `status` says so", async () => {
    const root = project();
    const { result, body } = await run(root, [
      "--agent",
      "writer",
      "--check",
      "test -f out.txt",
      "write out.txt",
    ]);
    expect(result.code).toBe(0);
    expect(body!.report.status).toBe("success");
    expect(body!.report.checks.map((check) => check.passed)).toEqual([true]);
    const status = await runCaesar(["status", body!.task_id], { cwd: root });
    expect(status.stdout).toMatch(/checks\s+✓ 1\/1 checks passed/);
    const ps = await runCaesar(["ps", "--json"], { cwd: root });
    expect(parseJsonOutput<{ checks: unknown }[]>(ps)[0]!.checks).toEqual({
      total: 1,
      passed: 1,
      state: "passed",
    });
  });

  it("come from the role (else [checks] default) and from `run:` acceptance criteria; the other criteria stay text", async () => {
    const root = project(
      [
        "[checks]",
        'default = ["true"]',
        "",
        "[[role]]",
        'name = "fixing"',
        'agents = ["writer"]',
        'checks = ["test -f out.txt"]',
      ].join("\n"),
    );
    const { body } = await run(root, [
      "--role",
      "fixing",
      "--accept",
      "run: test -s out.txt",
      "--accept",
      "out.txt is written",
      "write out.txt",
    ]);
    expect(body!.report.checks.map((check) => [check.command, check.from])).toEqual([
      ["test -f out.txt", "role:fixing"],
      ["test -s out.txt", "acceptance"],
    ]);
    // task.json keeps the criteria as given; the plan holds the checks, outside the agent's report.
    const dir = taskDir(root, body!.task_id);
    expect(readJson(join(dir, "task.json")).acceptance_criteria).toEqual([
      "run: test -s out.txt",
      "out.txt is written",
    ]);
    const { body: plain } = await run(root, ["--agent", "writer", "write out.txt"]);
    expect(plain!.report.checks.map((check) => [check.command, check.from])).toEqual([["true", "config"]]);
  });

  it("are caesar's alone: checks and attempts in the agent's report are ignored", async () => {
    const root = project();
    const { body } = await run(root, ["--agent", "fixer", "--check", "sh test.sh", "fix value.txt"], {
      FIXER_FAKE: "1",
    });
    expect(body!.report.status).toBe("partial");
    expect(body!.report.checks).toHaveLength(1);
    expect(body!.report.checks[0]).toMatchObject({ command: "sh test.sh", passed: false, exit_code: 1 });
    expect(body!.report.attempts).toHaveLength(1);
  });

  it("run without the providers' credentials and without the task's CAESAR_* variables", async () => {
    const root = project();
    const check =
      'test -z "$ANTHROPIC_API_KEY$OPENAI_API_KEY$MY_SERVICE_TOKEN$CAESAR_TASK_ID$CAESAR_REPORT_PATH" && test "$KEPT" = yes';
    const { body } = await run(root, ["--agent", "writer", "--check", check, "write out.txt"], {
      ANTHROPIC_API_KEY: "sk-ant-secret",
      OPENAI_API_KEY: "sk-secret",
      MY_SERVICE_TOKEN: "t0ken",
      KEPT: "yes",
    });
    expect(body!.report.checks[0]).toMatchObject({ passed: true, exit_code: 0 });
  });

  it("run with the environment of the command that asked for the task, not the service's", async () => {
    const root = project();
    // The first task starts the project's service with its environment; the second asks with another.
    await run(root, ["--agent", "writer", "write first.txt"], { KEPT: "first", PATH: process.env.PATH });
    const { body } = await run(
      root,
      ["--agent", "writer", "--check", 'test "$KEPT" = second', "write out.txt"],
      {
        KEPT: "second",
      },
    );
    expect(body!.report.checks[0]).toMatchObject({ passed: true, exit_code: 0 });
  });

  it("say what they changed in the workspace", async () => {
    const root = project();
    const { body } = await run(root, ["--agent", "writer", "--check", "echo x > made-by-check.txt", "write"]);
    const finding = body!.report.findings.find((f) => f.title.startsWith("The checks of attempt 1 changed"));
    expect(finding?.detail).toBe("added made-by-check.txt");
  });
});

describe("bad checks", () => {
  it("a check that hangs is killed at its deadline with its whole process group, and reported", async () => {
    const root = project();
    const started = Date.now();
    // A duration of its own: the background sleep is found by its command line (under the OS sandbox, $! is
    // a pid of the sandbox's own namespace, not the host's).
    const sleep = `sleep 300.${String(Math.random()).slice(2, 8)}`;
    const { result, body } = await run(root, [
      "--agent",
      "writer",
      "--check-timeout",
      "2s",
      "--check",
      `${sleep} & echo waiting; wait`,
      "write out.txt",
    ]);
    expect(result.code).toBe(1);
    const check = body!.report.checks[0]!;
    expect(check).toMatchObject({ passed: false, timed_out: true, error: "killed at its deadline (2.0s)" });
    expect(check.output_tail).toContain("waiting");
    expect(Date.now() - started).toBeLessThan(60_000);
    const left = readdirSync("/proc").filter((pid) => {
      try {
        return (
          /^\d+$/.test(pid) &&
          readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ").includes(sleep)
        );
      } catch {
        return false;
      }
    });
    expect(left).toEqual([]);
    expect(body!.report.findings.some((f) => f.title.includes("killed at its deadline"))).toBe(true);
  });

  it("a check's deadline never goes past the task's; a check left without time is reported not run", async () => {
    const root = project();
    const started = Date.now();
    const { result, body } = await run(root, [
      "--agent",
      "writer",
      "--timeout",
      "6s",
      "--check-timeout",
      "10m",
      "--check",
      "sleep 300",
      "--check",
      "true",
      "write out.txt",
    ]);
    expect(result.code).toBe(1);
    const [hanging, left] = body!.report.checks;
    expect(hanging).toMatchObject({ passed: false, timed_out: true, exit_code: null });
    // Killed at what was left of the task's 6 s, not at its own 10 minutes.
    const limit = Number(/^killed at its deadline \(([\d.]+)s\)$/.exec(hanging!.error ?? "")?.[1]);
    expect(limit).toBeGreaterThan(0);
    expect(limit).toBeLessThanOrEqual(6);
    expect(left).toMatchObject({
      command: "true",
      passed: false,
      exit_code: null,
      error: "not run: the task's deadline had passed",
    });
    expect(Date.now() - started).toBeLessThan(90_000);
  });

  it("a check that prints 100 MB keeps a bounded log and tail", async () => {
    const root = project();
    const { body } = await run(root, [
      "--agent",
      "writer",
      "--check",
      "head -c 100000000 /dev/zero | tr '\\0' x; echo; echo END-OF-OUTPUT; exit 3",
      "write out.txt",
    ]);
    const check = body!.report.checks[0]!;
    expect(check).toMatchObject({ exit_code: 3, passed: false });
    expect(check.output_bytes).toBeGreaterThanOrEqual(100_000_000);
    expect(check.output_tail.length).toBeLessThanOrEqual(4000);
    expect(check.output_tail.trimEnd().endsWith("END-OF-OUTPUT")).toBe(true);
    const log = join(taskDir(root, body!.task_id), check.log!);
    expect(statSync(log).size).toBeLessThan(600 * 1024);
    const text = readFileSync(log, "utf8");
    expect(text).toMatch(/\[caesar: \d+ bytes of output not kept\]/);
    expect(text.trimEnd().endsWith("END-OF-OUTPUT")).toBe(true);
    // The state (and every view of it) stays small too.
    expect(statSync(join(taskDir(root, body!.task_id), "state.json")).size).toBeLessThan(64 * 1024);
  }, 180_000);

  it.each([
    [["--check", "no-such-program --flag"], "check_not_a_command", "`no-such-program` was not found on PATH"],
    [["--check", "./scripts/missing.sh"], "check_not_a_command", "`./scripts/missing.sh` was not found"],
    [["--check", "   "], "check_empty", "is empty: a check is a command"],
    [["--accept", "run: "], "check_empty", "is empty: a check is a command"],
    [["--check", "true", "--isolation", "inplace"], "checks_need_worktree", "Checks need worktree isolation"],
    [["--attempts", "2"], "attempts_without_checks", "--attempts 2 needs checks"],
    [
      ["--check", "true", "--attempts", "0"],
      "invalid_argument",
      "Invalid argument at --attempts: expected a whole number from 1 to 10",
    ],
  ])("refuses %j before the agent starts (%s)", async (args, code, message) => {
    const root = project();
    const result = await runCaesar(["run", "--json", "--agent", "writer", ...args, "write out.txt"], {
      cwd: root,
    });
    expect(result.code).toBe(2);
    const { error } = parseJsonOutput<{ error: { code: string; summary: string } }>(result);
    expect(error.code).toBe(code);
    expect(error.summary).toContain(message);
    // Nothing started: no task directory, no worktree.
    const tasks = join(root, ".caesar", "tasks");
    expect(existsSync(tasks) ? readdirSync(tasks) : []).toEqual([]);
  });

  it("a read-only task cannot have a child run commands through checks", async () => {
    const root = project('[risk_profiles.default]\ndelegation_policy = { mode = "allow" }\n');
    const { body } = await run(root, ["--agent", "nested", "--mode", "read-only", "look"], {
      CAESAR_BIN,
      CHILD_ARGS: "--check true",
    });
    const dir = taskDir(root, body!.task_id);
    expect(readFileSync(join(dir, "child.rc"), "utf8").trim()).not.toBe("0");
    expect(readFileSync(join(dir, "child.json"), "utf8")).toContain("checks_from_read_only");
  });
});

describe("a running check and the task's lifecycle", () => {
  /** Start a task whose check runs until stopped; resolve once the check's process is recorded. */
  async function startHangingCheck(root: string) {
    const started = await runCaesar(
      [
        "run",
        "--json",
        "--detach",
        "--agent",
        "writer",
        "--check",
        "echo $$ > check.pid; sleep 300",
        "write",
      ],
      { cwd: root },
    );
    const { task_id: id } = parseJsonOutput<{ task_id: string }>(started);
    const state = join(taskDir(root, id), "state.json");
    const deadline = Date.now() + 60_000;
    for (;;) {
      const current = readJson<{ check_process: { pid: number } | null; conductor: { pid: number } }>(state);
      if (current.check_process)
        return { id, check: current.check_process.pid, conductor: current.conductor.pid };
      if (Date.now() > deadline) throw new Error("the check never started");
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  it("`caesar cancel` stops it and says so", async () => {
    const root = project();
    const { id, check } = await startHangingCheck(root);
    const cancelled = await runCaesar(["cancel", id, "--json"], { cwd: root, timeoutMs: 60_000 });
    expect(cancelled.code).toBe(0);
    const state = readJson<RunJson["state"] & { report: RunJson["report"] }>(
      join(taskDir(root, id), "state.json"),
    );
    expect(state.outcome).toBe("cancelled");
    expect(state.report.checks[0]).toMatchObject({ passed: false, error: "stopped: the task was cancelled" });
    expect(isProcessAlive(check)).toBe(false);
  });

  it("the conductor service killed during a check: the next one stops that check and runs the checks again", async () => {
    const root = project();
    const { id, check, conductor } = await startHangingCheck(root);
    process.kill(conductor, "SIGKILL");
    const deadline = Date.now() + 10_000;
    while (isProcessAlive(conductor) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const status = await runCaesar(["status", id, "--json"], { cwd: root, timeoutMs: 60_000 });
    expect(status.code, status.stderr).toBe(0);
    const record = join(taskDir(root, id), "state.json");
    const again = await (async () => {
      for (const end = Date.now() + 60_000; Date.now() < end; await new Promise((r) => setTimeout(r, 200))) {
        const current = readJson<{ check_process: { pid: number } | null }>(record);
        if (current.check_process && current.check_process.pid !== check) return current.check_process.pid;
      }
      throw new Error("the check never ran again");
    })();
    expect(isProcessAlive(check)).toBe(false);
    expect(isProcessAlive(again)).toBe(true);
    const cancelled = await runCaesar(["cancel", id, "--json"], { cwd: root, timeoutMs: 60_000 });
    expect(parseJsonOutput<{ outcome: string }>(cancelled).outcome).toBe("cancelled");
    const state = readJson<RunJson["state"] & { report: RunJson["report"] }>(record);
    expect(state.report.checks[0]).toMatchObject({ passed: false, error: "stopped: the task was cancelled" });
    expect(isProcessAlive(again)).toBe(false);
  });
});

describe("attempts", () => {
  it("a failing check gives the agent a second attempt with the evidence (a fresh run for an agent that cannot resume)", async () => {
    const root = project();
    const { result, body } = await run(root, [
      "--agent",
      "fixer",
      "--check",
      "sh test.sh",
      "--attempts",
      "3",
      "fix value.txt",
    ]);
    expect(result.code).toBe(0);
    const report = body!.report;
    expect(report.status).toBe("success");
    expect(report.attempts.map((a) => [a.attempt, a.how, a.checks_passed])).toEqual([
      [1, "first", false],
      [2, "fresh", true],
    ]);
    expect(report.checks[0]).toMatchObject({ passed: true, log: "checks/2-1.log" });
    expect(readFileSync(join(body!.state.worktree!, "value.txt"), "utf8")).toBe("fixed\n");
    const progress = events(root, body!.task_id).filter((event) => event.type === "progress");
    expect(progress.map((event) => event.message)).toContain(
      "attempt 2 of 3: 1 check(s) failed; a new run of fixer gets the diff so far and their output",
    );
    expect(events(root, body!.task_id).filter((event) => event.type === "started")).toHaveLength(2);
    // The first attempt's report is kept aside; the final one is the second attempt's own.
    const dir = taskDir(root, body!.task_id);
    expect(existsSync(join(dir, "attempts", "1", "report.json"))).toBe(true);
  });

  it("stops after --attempts, partial, with every attempt recorded", async () => {
    const root = project();
    const { result, body } = await run(
      root,
      ["--agent", "fixer", "--check", "sh test.sh", "--attempts", "2", "fix value.txt"],
      { FIXER_NEVER: "1" },
    );
    expect(result.code).toBe(1);
    expect(body!.report.status).toBe("partial");
    expect(body!.report.attempts.map((a) => a.checks_passed)).toEqual([false, false]);
  });
});
