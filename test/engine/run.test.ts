import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isProcessAlive } from "../../src/support/process.js";
import { CAESAR_BIN, parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { besidesSandbox } from "../helpers/findings.js";
import {
  FIXTURE_BIN,
  git,
  makeRepo,
  readJson,
  taskDir,
  tempDir,
  writeConfig,
  writeFiles,
} from "../helpers/repo.js";
import { itWith, JQ } from "../helpers/system-deps.js";

interface RunJson {
  task_id: string;
  state: {
    id: string;
    phase: string;
    outcome: string;
    worktree: string | null;
    branch: string | null;
    base_ref: string | null;
    workspace: string;
    depth: number;
    parent_id: string | null;
    conductor: { pid: number } | null;
    agent_process: { pid: number } | null;
    error: { code: string; message: string } | null;
  };
  report: {
    status: string;
    summary: string;
    details: string;
    report_source: string;
    changes_verified_by: string;
    changes: { path: string; action: string; from?: string; summary?: string }[];
    findings: { severity: string; title: string; detail?: string }[];
  };
}

const ALL_FIXTURES = [
  "conformant",
  "writer",
  "crash",
  "hang",
  "ignore-term",
  "grandchild",
  "bad-report",
  "committer",
  "env-dump",
  "nested",
  "seed-agent",
  "mover",
];

function project(config = "", files?: Record<string, string>): string {
  const root = makeRepo(files);
  writeConfig(root, config, ALL_FIXTURES);
  return root;
}

async function run(root: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const result = await runCaesar(["run", "--json", ...args], { cwd: root, env, timeoutMs: 90_000 });
  return { result, body: result.code === 2 ? undefined : parseJsonOutput<RunJson>(result) };
}

describe("an [[agent]] declared as OACP's own example writes it", () => {
  itWith(JQ, 'bin = "my-agent.sh" beside .caesar/config.toml runs that file', async () => {
    const root = makeRepo();
    writeFiles(root, {
      ".caesar/my-agent.sh": readFileSync(join(FIXTURE_BIN, "seed-agent.sh"), "utf8"),
      ".caesar/config.toml": '[[agent]]\nid = "my-agent"\nbin = "my-agent.sh"\nargs = ["{{prompt}}"]\n',
    });
    chmodSync(join(root, ".caesar", "my-agent.sh"), 0o755);
    const { result, body } = await run(root, ["--agent", "my-agent", "Fix the parser"]);
    expect(result.code, result.stderr).toBe(0);
    expect(body!.report.summary).toBe("Handled: Fix the parser");
  });

  it("a program that cannot be found is refused before anything is created", async () => {
    const root = makeRepo();
    writeFiles(root, { ".caesar/config.toml": '[[agent]]\nid = "ghost"\nbin = "no-such-agent.sh"\n' });
    const result = await runCaesar(["run", "--json", "--agent", "ghost", "anything"], { cwd: root });
    expect(result.code).toBe(2);
    const error = parseJsonOutput<{ error: { code: string; summary: string } }>(result).error;
    expect(error).toMatchObject({
      code: "agent_program_missing",
      summary: 'Agent "ghost": its program cannot be found, or is not executable.',
    });
    expect(existsSync(join(root, ".caesar", "tasks"))).toBe(false);
    expect(existsSync(join(root, ".caesar", "wt"))).toBe(false);
  });
});

describe("caesar run with the seed's ten-line agent", () => {
  // test/fixtures/bin/seed-agent.sh is the README's agent, jq and all (the other fixtures use Node).
  itWith(JQ, "runs it unmodified in a worktree and recovers its report from the file", async () => {
    const root = project();
    const { result, body } = await run(root, ["--agent", "seed-agent", "Fix the parser"]);
    expect(result.code).toBe(0);
    expect(body!.report.status).toBe("success");
    expect(body!.report.summary).toBe("Handled: Fix the parser");
    expect(body!.report.report_source).toBe("file");
    expect(body!.report.changes_verified_by).toBe("git");
    expect(body!.state.outcome).toBe("succeeded");
    expect(body!.state.worktree).toContain(join(".caesar", "wt", body!.task_id));
    expect(body!.state.branch).toMatch(
      new RegExp(`^caesar/seed-agent/fix-the-parser-${body!.task_id.slice(2)}$`),
    );
    expect(body!.state.base_ref).toBe(git(root, "rev-parse", "HEAD"));
    const dir = taskDir(root, body!.task_id);
    for (const file of ["task.json", "report.json", "events.jsonl", "raw.log", "state.json"]) {
      expect(existsSync(join(dir, file)), file).toBe(true);
    }
    const task = readJson(join(dir, "task.json"));
    expect(task.protocol).toBe("caesar.task/v1");
    // No role was asked for: `role` is absent (the seed marks it optional), never null.
    expect(Object.keys(task)).not.toContain("role");
    expect(task.workspace).toBe(body!.state.worktree);
    const events = readFileSync(join(dir, "events.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(events[0].type).toBe("started");
    expect(events.filter((e) => e.type === "finished")).toHaveLength(1);
    expect(events.at(-1).type).toBe("finished");
    // state.json records the conductor's and the agent's pids
    expect(body!.state.conductor?.pid).toBeGreaterThan(0);
    expect(body!.state.agent_process?.pid).toBeGreaterThan(0);
  });

  it("is the agent the README shows, line for line", () => {
    const readme = readFileSync(join(FIXTURE_BIN, "..", "..", "..", "README.md"), "utf8");
    const block = /```bash\n(#!\/usr\/bin\/env bash\nobjective=[\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBe(readFileSync(join(FIXTURE_BIN, "seed-agent.sh"), "utf8"));
  });
});

describe("the agent's environment and arguments", () => {
  it("gets the eight CAESAR_* variables, AGENT_CHAT_ROOT, the workspace as cwd, and the args after -- verbatim", async () => {
    const root = project();
    const { body } = await run(root, ["--agent", "env-dump", "look around", "--", "--flag", "two words"]);
    const dir = taskDir(root, body!.task_id);
    const env = readFileSync(join(dir, "env.txt"), "utf8");
    for (const name of [
      "TASK_DIR",
      "TASK_FILE",
      "REPORT_PATH",
      "EVENTS_PATH",
      "TASK_ID",
      "AGENT",
      "DEPTH",
      "PROTOCOL_VERSION",
    ]) {
      expect(env).toContain(`CAESAR_${name}=`);
    }
    expect(env).toContain(`CAESAR_TASK_ID=${body!.task_id}`);
    // A task a person started is depth 1: the person (the main agent) is 0.
    expect(env).toContain("CAESAR_DEPTH=1");
    expect(env).toContain(`AGENT_CHAT_ROOT=${join(root, ".caesar", "chat")}`);
    const args = readFileSync(join(dir, "args.txt"), "utf8").trim().split("\n");
    expect(args.slice(-2)).toEqual(["--flag", "two words"]);
    expect(args.join("\n")).toContain("Objective: look around");
    expect(readFileSync(join(dir, "cwd.txt"), "utf8").trim()).toBe(body!.state.worktree);
  });

  it("refuses a stray operand without --", async () => {
    const root = project();
    const result = await runCaesar(["run", "--agent", "conformant", "fix", "this", "--json"], { cwd: root });
    expect(result.code).toBe(2);
    expect(parseJsonOutput<{ error: { code: string } }>(result).error.code).toBe("stray_operand");
    expect(existsSync(join(root, ".caesar", "tasks"))).toBe(false);
  });
});

describe("reconciliation with git", () => {
  it("replaces the declaration by what git observed, with findings for both disagreements", async () => {
    const root = project();
    const { body } = await run(root, ["--agent", "writer", "write a file"]);
    expect(body!.report.changes).toEqual(
      [{ path: "out.txt", action: "added", summary: undefined }].map(({ summary: _, ...c }) => c),
    );
    const titles = body!.report.findings.map((f) => f.title).join("\n");
    expect(titles).toContain("1 declared change(s) not found by git");
    expect(body!.report.findings.find((f) => f.title.includes("not found by git"))?.detail).toBe(
      "declared-only.txt",
    );
  });

  it("observes a rename as renamed, flags a declared action git contradicts, and applies the rename", async () => {
    const root = project("", {
      "notes.txt": "line 1\nline 2\nline 3\nline 4\nline 5\n",
      "keep.txt": "kept\n",
    });
    const { body } = await run(root, ["--agent", "mover", "move the notes"]);
    expect(body!.report.changes).toEqual([
      { path: "docs/notes.txt", action: "renamed", from: "notes.txt", summary: "moved under docs/" },
      { path: "keep.txt", action: "modified" },
    ]);
    const contradiction = body!.report.findings.find((f) => f.title.includes("contradicted by git"));
    expect(contradiction).toMatchObject({
      title: "1 declared change(s) contradicted by git",
      detail: "keep.txt: declared deleted, git saw it modified",
    });
    expect(body!.report.findings.map((f) => f.title).join("\n")).not.toContain("not found by git");
    const applied = await runCaesar(["apply", body!.task_id], { cwd: root });
    expect(applied.code, applied.stderr).toBe(0);
    expect(existsSync(join(root, "notes.txt"))).toBe(false);
    expect(readFileSync(join(root, "docs", "notes.txt"), "utf8")).toContain("line 5");
  });

  it("counts work the agent committed in its worktree (diff against base_ref, not HEAD)", async () => {
    const root = project();
    const { body } = await run(root, ["--agent", "committer", "commit things"]);
    expect(body!.report.changes.map((c) => c.path).sort()).toEqual(["committed.txt", "loose.txt"]);
    expect(besidesSandbox(body!.report.findings).filter((f) => f.severity !== "info")).toEqual([]);
    const diff = await runCaesar(["diff", body!.task_id, "--stat"], { cwd: root });
    expect(diff.stdout).toContain("committed.txt");
    expect(diff.stdout).toContain("loose.txt");
  });

  it("flags any write during a read-only task as a high-severity finding, and fails the run", async () => {
    // Unsandboxed: under caesar's OS sandbox the kernel refuses the write itself (test/sandbox/).
    const root = project('[sandbox]\nmode = "off"\n');
    const { result, body } = await run(root, ["--agent", "writer", "--mode", "read-only", "just look"]);
    // The agent says success; git saw a write where none was allowed: the run fails, the finding says why.
    expect(body!.report.status).toBe("success");
    expect(result.code).toBe(1);
    const high = body!.report.findings.find((f) => f.severity === "high");
    expect(high?.title).toBe("1 file(s) changed during a read-only task");
    expect(high?.detail).toBe("added out.txt");
    // Nothing keeps this agent from writing (no OS sandbox, no read-only of its own): under isolation auto
    // it ran in a worktree, so the write did not land in the user's checkout.
    expect(body!.state.worktree).not.toBeNull();
    expect(existsSync(join(root, "out.txt"))).toBe(false);
  });

  it("still runs a read-only task in place under auto when its agent enforces read-only itself", async () => {
    const root = project();
    const { body } = await run(root, ["--agent", "reference", "--mode", "read-only", "just look"]);
    expect(body!.state.worktree).toBeNull();
  });
});

describe("report recovery tiers", () => {
  it("turns an invalid report.json into a finding and synthesises a failed report from the outcome", async () => {
    const root = project();
    const { result, body } = await run(root, ["--agent", "bad-report", "report badly"]);
    expect(result.code).toBe(1);
    expect(body!.report.report_source).toBe("synthesized");
    expect(body!.report.status).toBe("partial");
    const invalid = body!.report.findings.find((f) => f.title.startsWith("report.json is not a valid"));
    expect(invalid?.detail).toContain("$.status");
    expect(invalid?.detail).toContain("$.summary");
  });

  it("falls back to a fenced caesar:report block in the output", async () => {
    const root = project();
    const { body } = await run(root, ["--agent", "bad-report", "fence it"], { FENCED: "1" });
    expect(body!.report.report_source).toBe("fenced");
    expect(body!.report.summary).toBe("from the fence");
  });

  it("falls back to a self-declared report JSON in the output", async () => {
    const root = project();
    const { body } = await run(root, ["--agent", "bad-report", "declare it"], { SELF: "1" });
    expect(body!.report.report_source).toBe("self-declared");
    expect(body!.report.status).toBe("blocked");
  });

  it("synthesises a failed report for a crashing agent, with the files it left as verified changes", async () => {
    const root = project();
    const { result, body } = await run(root, ["--agent", "crash", "crash"]);
    expect(result.code).toBe(1);
    expect(body!.state.outcome).toBe("failed");
    expect(body!.report.status).toBe("failed");
    // Reason first, then the agent's own last words; the details carry the exit status and its output.
    expect(body!.report.summary).toMatch(/^Agent "crash" exited with code 3: about to crash\. 1 file/);
    expect(body!.report.details).toContain("The agent exited with code 3.");
    expect(body!.report.details).toContain("Last output:\nabout to crash");
    expect(body!.report.changes).toEqual([{ path: "half-done.txt", action: "added" }]);
    expect(readFileSync(join(taskDir(root, body!.task_id), "raw.log"), "utf8")).toContain("about to crash");
    // The error event and state.error say the same, once.
    const errors = events(root, body!.task_id).filter((e) => e.type === "error");
    expect(errors).toHaveLength(1);
    expect(errors[0]!.code).toBe("agent_failed");
    expect(errors[0]!.message).toBe(body!.state.error?.message);
    expect(body!.state.error?.message).toMatch(
      /^Agent "crash" exited with code 3: about to crash\ncommand: /,
    );
  });
});

describe("processes", () => {
  it("refuses an agent whose program does not exist before anything is created", async () => {
    const root = makeRepo();
    writeConfig(root, '[[agent]]\nid = "ghost"\nbin = "/nonexistent/ghost-agent"\nargs = ["{{prompt}}"]\n');
    const { result } = await run(root, ["--agent", "ghost", "anything"]);
    expect(result.code).toBe(2);
    const refusal = JSON.parse(result.stdout) as { error: { code: string; detail: string } };
    expect(refusal.error.code).toBe("agent_program_missing");
    expect(refusal.error.detail).toContain("Nothing was started.");
    expect(existsSync(join(root, ".caesar", "tasks"))).toBe(false);
  });

  it("fails at once, clearly, when the agent's program is gone by the time it starts", async () => {
    const root = makeRepo();
    const bin = join(mkdtempSync(join(tmpdir(), "caesar-ghost-")), "ghost-agent");
    writeFileSync(bin, "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    // It exists when the task is planned; the worktree's setup removes it before the agent starts.
    writeConfig(
      root,
      `[[agent]]\nid = "ghost"\nbin = "${bin}"\nargs = ["{{prompt}}"]\n[worktree]\nsetup = ["rm ${bin}"]\n`,
    );
    const { result, body } = await run(root, ["--agent", "ghost", "anything"]);
    expect(result.code).toBe(1);
    expect(body!.state.error?.code).toBe("agent_not_found");
    expect(body!.report.summary).toContain(`${bin} was not found`);
    // The command line it tried is part of the failure, as for any other.
    expect(body!.state.error?.message).toContain(`\ncommand: ${bin} <prompt>`);
    expect(body!.report.details).toContain(`The agent did not run.\nCommand: ${bin} <prompt>`);
    const events = readFileSync(join(taskDir(root, body!.task_id), "events.jsonl"), "utf8");
    expect(events).toContain('"type":"error"');
    expect(events.match(/"type":"finished"/g)).toHaveLength(1);
  });

  it("ends a hanging agent at its deadline", async () => {
    const root = project();
    const { result, body } = await run(root, ["--agent", "hang", "--timeout", "1s", "hang"]);
    expect(result.code).toBe(1);
    expect(body!.state.outcome).toBe("timed_out");
    expect(body!.report.summary).toContain('Agent "hang" timed out after 1.0s and was stopped');
    expect(isAlive(body!.state.agent_process!.pid)).toBe(false);
    // A timeout is a failure like another: one `error` event, before `finished`.
    const types = events(root, body!.task_id).map((e) => `${e.type}${e.code ? `:${e.code}` : ""}`);
    expect(types.filter((t) => t.startsWith("error"))).toEqual(["error:timed_out"]);
    expect(types.slice(-2)).toEqual(["error:timed_out", "finished"]);
  });

  it("SIGKILLs an agent that ignores SIGTERM, after the grace delay", async () => {
    const root = project();
    const { body } = await run(root, ["--agent", "ignore-term", "--timeout", "1s", "stubborn"]);
    expect(body!.state.outcome).toBe("timed_out");
    expect(isAlive(body!.state.agent_process!.pid)).toBe(false);
  });

  it("leaves no grandchild holding the pipe when the agent exits", async () => {
    const root = project();
    const { result, body } = await run(root, ["--agent", "grandchild", "leave one behind"]);
    expect(result.code).toBe(0);
    // The grandchild was started (its pid is one of its sandbox's when it has one: not looked up here)…
    expect(existsSync(join(taskDir(root, body!.task_id), "grandchild.pid"))).toBe(true);
    // …and no process of the task is left: none carries its id in its environment.
    expect(processesOfTask(body!.task_id)).toEqual([]);
  });
});

describe("isolation", () => {
  it("refuses an inplace write in a git repository before any task directory exists", async () => {
    const root = project();
    const { result } = await run(root, ["--agent", "writer", "--isolation", "inplace", "write here"]);
    expect(result.code).toBe(1);
    expect(parseJsonOutput<{ error: { code: string; detail: string } }>(result).error.detail).toContain(
      "allow_inplace_write = true",
    );
    expect(existsSync(join(root, ".caesar", "tasks"))).toBe(false);
  });

  it("allows it with [policy] allow_inplace_write, and verifies only what the task changed", async () => {
    const root = project("[policy]\nallow_inplace_write = true\n");
    writeFiles(root, { "README.md": "# user edit, uncommitted\n" });
    const { body } = await run(root, ["--agent", "writer", "--isolation", "inplace", "write here"]);
    expect(body!.state.worktree).toBeNull();
    expect(body!.report.changes_verified_by).toBe("git");
    expect(body!.report.changes.map((c) => c.path)).toEqual(["out.txt"]);
    expect(readFileSync(join(root, "out.txt"), "utf8")).toContain("fixture agent");
  });

  it("outside git, runs in place and keeps the agent's declaration", async () => {
    const root = tempDir();
    writeConfig(root, "", ["writer"]);
    const { body } = await run(root, ["--agent", "writer", "write"]);
    expect(body!.state.worktree).toBeNull();
    expect(body!.report.changes_verified_by).toBe("declaration");
    expect(body!.report.changes.map((c) => c.path)).toEqual(["out.txt", "declared-only.txt"]);
  });

  it("copies and links [worktree] paths, excludes them from the diff, and says the link is shared", async () => {
    const root = project('[worktree]\ncopy = [".env"]\nlink = ["shared"]\n', { "README.md": "x\n" });
    writeFiles(root, { ".env": "SECRET=1\n", "shared/data.txt": "big\n" });
    git(root, "add", "-f", "shared/data.txt");
    git(root, "commit", "-q", "-m", "shared");
    git(root, "rm", "-q", "--cached", "-r", "shared");
    git(root, "commit", "-q", "-m", "untrack shared");
    const { body } = await run(root, ["--agent", "conformant", "copy things"]);
    const worktree = body!.state.worktree!;
    expect(readFileSync(join(worktree, ".env"), "utf8")).toBe("SECRET=1\n");
    expect(readFileSync(join(worktree, "shared", "data.txt"), "utf8")).toBe("big\n");
    expect(body!.report.changes).toEqual([]);
    expect(body!.report.findings.map((f) => f.title)).toContain(
      "shared is shared with the main tree (symlink)",
    );
  });

  it("fails the task with a report naming the setup command that failed, and leaves no worktree", async () => {
    const root = project('[worktree]\nsetup = ["true", "echo preparing; exit 7"]\n');
    const { result, body } = await run(root, ["--agent", "conformant", "needs setup"]);
    expect(result.code).toBe(1);
    expect(body!.state.error?.code).toBe("setup_failed");
    expect(body!.report.summary).toContain(
      "Setup command `echo preparing; exit 7` exited with code 7, so the agent did not run",
    );
    // What the setup printed is in the report and the error, not only in raw.log.
    expect(body!.report.details).toContain("The agent did not run.\nLast output:\npreparing");
    expect(body!.state.error?.message).toContain("last output:\npreparing");
    expect(git(root, "worktree", "list")).not.toContain(".caesar/wt");
    // What a person reads says that setup failed, not that there is no repository.
    const human = await runCaesar(["run", "--agent", "conformant", "needs setup"], { cwd: root });
    expect(human.stdout).toContain("Setup command `echo preparing; exit 7` exited with code 7");
    expect(human.stdout).toContain("none: the agent did not run");
    expect(human.stdout).not.toContain("no git repository");
    expect(git(root, "branch")).not.toContain("caesar/");
    expect(readFileSync(join(taskDir(root, body!.task_id), "raw.log"), "utf8")).toContain("preparing");
  });
  it("stops a setup command that hangs at the task's deadline, and leaves nothing running", async () => {
    const root = project('[worktree]\nsetup = ["echo $$ > ../setup.pid; sleep 300"]\n');
    const { result, body } = await run(root, ["--agent", "conformant", "--timeout", "3s", "needs setup"]);
    expect(result.code).toBe(1);
    expect(body!.state.error?.code).toBe("setup_failed");
    expect(body!.report.summary).toContain("killed by SIGTERM");
    const pid = Number(readFileSync(join(root, ".caesar", "wt", "setup.pid"), "utf8"));
    expect(isProcessAlive(pid)).toBe(false);
    expect(readFileSync(join(taskDir(root, body!.task_id), "raw.log"), "utf8")).toContain(
      "was stopped at the task's deadline",
    );
  });
});

describe("nested delegation", () => {
  it("records the parent and the depth when an agent calls caesar run itself", async () => {
    const root = project('[risk_profiles.default]\ndelegation_policy = { mode = "allow" }\n');
    const { body } = await run(root, ["--agent", "nested", "delegate something"], { CAESAR_BIN });
    const dir = taskDir(root, body!.task_id);
    expect(readFileSync(join(dir, "child.rc"), "utf8").trim()).toBe("0");
    const child = JSON.parse(readFileSync(join(dir, "child.json"), "utf8")) as RunJson;
    expect(child.state.parent_id).toBe(body!.task_id);
    // The person is depth 0, the task they started 1, its child 2 (CAESAR_DEPTH, task.json, state).
    expect(child.state.depth).toBe(2);
    // The child's task lives in the same project store, not in the parent's worktree.
    expect(existsSync(taskDir(root, child.task_id))).toBe(true);
  });
});

function events(root: string, id: string): Record<string, string>[] {
  return readFileSync(join(taskDir(root, id), "events.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
}

/** The processes of the machine whose environment names the task (its agent's, and all they started). */
function processesOfTask(id: string): number[] {
  const pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  return pids.map(Number).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(`CAESAR_TASK_ID=${id}`);
    } catch {
      return false;
    }
  });
}

/** A process that has not ended (a zombie waiting for a slow init to reap it has). */
function isAlive(pid: number): boolean {
  return isProcessAlive(pid);
}

void FIXTURE_BIN;
