import { spawn } from "node:child_process";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isProcessAlive } from "../../src/support/process.js";
import { CAESAR_BIN, parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { git, makeRepo, readJson, taskDir, tempDir, writeConfig } from "../helpers/repo.js";
import { itWith } from "../helpers/system-deps.js";
import { BUBBLEWRAP } from "../sandbox/probe-project.js";

// The conductor service: one process per project conducts every local task, and its own death — kill -9,
// again and again — loses no task: agents write their output to files and outlive it, and the next service
// takes them over where they stand.

interface StateJson {
  id: string;
  phase: string;
  outcome: string | null;
  conductor: { pid: number } | null;
  agent_process: { pid: number } | null;
  report: { status: string; summary: string; changes: { path: string }[] } | null;
}

interface ServiceJson {
  pid: number;
  socket: string;
}

function project(config = ""): string {
  const root = makeRepo({ "README.md": "# project\n" });
  writeConfig(root, config, ["conformant", "chatty", "hang"]);
  git(root, "add", ".caesar/config.toml");
  git(root, "commit", "-qm", "caesar config");
  return root;
}

function state(root: string, id: string): StateJson {
  return readJson<StateJson>(join(taskDir(root, id), "state.json"));
}

function serviceFile(root: string): string {
  return join(root, ".git", "caesar", "service", "service.json");
}

function service(root: string): ServiceJson | undefined {
  try {
    const info = readJson<ServiceJson>(serviceFile(root));
    return isProcessAlive(info.pid) ? info : undefined;
  } catch {
    return undefined;
  }
}

/** Wait for `probe`; on a timeout, say what the project's service logged (`root`, when given). */
async function until<T>(
  what: string,
  probe: () => T | null | undefined | false,
  timeoutMs = 60_000,
  root?: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) {
      const log = root ? join(root, ".git", "caesar", "service", "service.log") : undefined;
      const logged = log && existsSync(log) ? readFileSync(log, "utf8").slice(-4000) : "(no service log)";
      throw new Error(`timed out waiting for ${what}\nservice.log:\n${logged}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function detach(root: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const result = await runCaesar(["run", "--detach", "--json", ...args], { cwd: root, env });
  expect(result.code, result.stderr + result.stdout).toBe(0);
  return parseJsonOutput<{ task_id: string }>(result).task_id;
}

/** Send one raw line to the service's socket; resolves with what it answers. */
function rawRequest(socket: string, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const client = connect(socket);
    let text = "";
    client.setEncoding("utf8");
    client.on("connect", () => client.write(line));
    client.on("data", (chunk: string) => {
      text += chunk;
    });
    client.on("error", reject);
    client.on("close", () => resolve(text));
  });
}

describe("the conductor service", () => {
  it("conducts every task of a project in one process, started by the first task", async () => {
    const root = project();
    const runs = await Promise.all(
      ["one", "two", "three"].map((name) =>
        runCaesar(["run", "--json", "--agent", "conformant", `task ${name}`], { cwd: root }),
      ),
    );
    const ids = runs.map((run) => {
      expect(run.code, run.stderr).toBe(0);
      return parseJsonOutput<{ task_id: string }>(run).task_id;
    });
    const conductors = new Set(ids.map((id) => state(root, id).conductor?.pid));
    expect(conductors.size).toBe(1);
    const running = service(root);
    expect(running && conductors.has(running.pid)).toBe(true);
    const status = parseJsonOutput<{ running: boolean; service: { pid: number; tasks: unknown[] } }>(
      await runCaesar(["service", "status", "--json"], { cwd: root }),
    );
    expect(status).toMatchObject({ running: true, service: { pid: running!.pid, tasks: [] } });
    // A second service for the same project exits at once, leaving the first one alone.
    const second = await runCaesar(["service", "run"], { cwd: root, timeoutMs: 20_000 });
    expect(second.code).toBe(0);
    expect(second.stderr).toContain("another service conducts the tasks of");
    expect(service(root)?.pid).toBe(running!.pid);
  });

  it("keeps its socket and folder private, and answers a request it cannot read with an error", async () => {
    const root = project();
    await runCaesar(["run", "--json", "--agent", "conformant", "start the service"], { cwd: root });
    const info = service(root)!;
    expect(statSync(info.socket).mode & 0o777).toBe(0o600);
    expect(statSync(join(root, ".git", "caesar", "service")).mode & 0o777).toBe(0o700);
    expect(statSync(serviceFile(root)).mode & 0o777).toBe(0o600);
    for (const line of ["not json\n", '{"op":"launch-missiles"}\n', '{"op":"conduct","task":42}\n']) {
      const answer = JSON.parse(await rawRequest(info.socket, line)) as { ok: boolean; code: string };
      expect(answer).toMatchObject({ ok: false, code: "invalid_request" });
    }
    // A task id that is not one never becomes a path: refused, and the service still answers.
    const odd = JSON.parse(await rawRequest(info.socket, '{"op":"conduct","task":"../../etc"}\n')) as {
      ok: boolean;
      code: string;
    };
    expect(odd).toMatchObject({ ok: false, code: "invalid_request" });
    const status = await runCaesar(["service", "status", "--json"], { cwd: root });
    expect(parseJsonOutput<{ running: boolean }>(status).running).toBe(true);
  });

  it("a task finished by a service killed before it wrote the task directory's state.json: the next one writes it", async () => {
    const root = project();
    const done = await runCaesar(["run", "--json", "--agent", "conformant", "first"], { cwd: root });
    expect(done.code, done.stderr).toBe(0);
    const id = parseJsonOutput<{ task_id: string }>(done).task_id;
    const mirror = join(taskDir(root, id), "state.json");
    const finished = readFileSync(mirror, "utf8");
    // The record finished, its copy not yet: as a service killed between the two writes leaves them.
    await runCaesar(["service", "stop", "--now"], { cwd: root });
    writeFileSync(mirror, finished.replace('"phase": "finished"', '"phase": "running"'));
    // The next service (brought by the next task) finds it finished and writes its copy.
    await detach(root, ["--agent", "conformant", "second"]);
    await until("the copy to catch up", () => readFileSync(mirror, "utf8") === finished, 60_000, root);
  });

  it("loses no task when it is killed with SIGKILL again and again: every agent ends with its own report", async () => {
    const root = project("[policy]\nmax_parallel = 4\n");
    const env = { LINES: "40", PAUSE_S: "0.1" };
    const ids = await Promise.all(
      ["a", "b", "c"].map((name) => detach(root, ["--agent", "chatty", `talk ${name}`], env)),
    );
    const agents = new Map<string, number>();
    for (let kill = 0; kill < 4; kill++) {
      const running = await until("a service", () => service(root), 60_000, root);
      await new Promise((resolve) => setTimeout(resolve, 300 + Math.random() * 500));
      for (const id of ids) {
        const pid = state(root, id).agent_process?.pid;
        if (pid !== undefined && !agents.has(id)) agents.set(id, pid);
      }
      process.kill(running.pid, "SIGKILL");
      // Any reader brings a service back, which takes the tasks over.
      const ps = await runCaesar(["ps", "--json"], { cwd: root });
      expect(ps.code, ps.stderr).toBe(0);
    }
    for (const id of ids)
      await until(`${id} to finish`, () => state(root, id).phase === "finished", 60_000, root);
    for (const id of ids) {
      const final = state(root, id);
      expect(final.outcome, id).toBe("succeeded");
      expect(final.report?.status).toBe("success");
      expect(final.report?.summary).toBe("printed 40 lines");
      expect(final.report?.changes.map((change) => change.path)).toEqual([`said-${id}.txt`]);
      // The same agent process ran from start to end: it was taken over, never started again.
      if (agents.has(id)) expect(final.agent_process?.pid).toBe(agents.get(id));
      // Its output is in raw.log once, in order, whichever conductor read it.
      const raw = readFileSync(join(taskDir(root, id), "raw.log"), "utf8");
      const lines = raw.split("\n").filter((line) => line.startsWith("line "));
      expect(lines).toEqual(Array.from({ length: 40 }, (_, index) => `line ${index + 1} of 40`));
      expect(raw.split("\n").filter((line) => line.startsWith("note ")).length).toBe(4);
      const events = readFileSync(join(taskDir(root, id), "events.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { type: string });
      expect(events.filter((event) => event.type === "started").length).toBe(1);
      expect(events.filter((event) => event.type === "finished").length).toBe(1);
    }
  }, 180_000);

  // Out of the OS sandbox, the agent writes straight into raw.log (nothing of it may be cut when taken
  // over); in it, caesar copies its output there (up to the cursor: nothing twice).
  const floodKilled = (how: string) =>
    `loses no byte of a flood (${how}) when it is killed in the middle of it: raw.log holds the output once, in order, and the report at its end is found`;
  const floodThroughKills = async (sandbox: "off" | "required") => {
    const root = project();
    // 12 copies of 1.1 MB of lines with characters of 2, 3 and 4 bytes (cut apart by the reader's chunks),
    // a pause between copies so that the kills land in the flood, then the report as the last of stdout.
    const folder = tempDir("caesar-flood-agent-");
    const piece = Array.from({ length: 24_000 }, (_, i) => `${i} é ✓ 😀 ${"x".repeat(i % 50)}\n`).join("");
    writeFileSync(join(folder, "piece.txt"), piece);
    const report = '{"protocol":"caesar.report/v1","status":"success","summary":"flooded"}';
    const agent = join(folder, "flood.sh");
    writeFileSync(
      agent,
      `#!/bin/sh\nfor i in 1 2 3 4 5 6 7 8 9 10 11 12; do cat "${join(folder, "piece.txt")}"; sleep 0.15; done\nprintf '\`\`\`json caesar:report\\n%s\\n\`\`\`\\n' '${report}'\n`,
      { mode: 0o755 },
    );
    writeConfig(root, `[sandbox]\nmode = "${sandbox}"\n[[agent]]\nid = "flood"\nbin = "${agent}"\n`);
    git(root, "commit", "-qam", "flood");
    const id = await detach(root, ["--agent", "flood", "flood"]);
    for (let kill = 0; kill < 3; kill++) {
      const running = await until("a service", () => service(root), 60_000, root);
      await new Promise((resolve) => setTimeout(resolve, 200 + Math.random() * 400));
      if (state(root, id).phase === "finished") break;
      process.kill(running.pid, "SIGKILL");
      const ps = await runCaesar(["ps", "--json"], { cwd: root });
      expect(ps.code, ps.stderr).toBe(0);
    }
    await until("the flood to finish", () => state(root, id).phase === "finished", 120_000, root);
    const final = state(root, id);
    expect(final.outcome).toBe("succeeded");
    expect(final.report).toMatchObject({ status: "success", summary: "flooded" });
    // Taken over at least once while it printed (the same agent process to its end).
    const events = readFileSync(join(taskDir(root, id), "events.jsonl"), "utf8");
    expect(events).toContain("the conductor service took over flood");
    const raw = readFileSync(join(taskDir(root, id), "raw.log"));
    const printed = Buffer.from(`${piece.repeat(12)}\`\`\`json caesar:report\n${report}\n\`\`\`\n`);
    const at = raw.indexOf(printed);
    expect(at, "the flood is in raw.log, whole and in order").toBeGreaterThanOrEqual(0);
    // Nothing of it twice: what else raw.log holds is caesar's few notes.
    expect(raw.length - printed.length).toBeLessThan(4096);
  };
  it(floodKilled("straight into raw.log"), () => floodThroughKills("off"), 180_000);
  itWith(
    BUBBLEWRAP,
    floodKilled("copied by caesar, in its OS sandbox"),
    () => floodThroughKills("required"),
    180_000,
  );

  it("conducts another task while one floods its output: the other starts and ends during the flood", async () => {
    const root = project("[policy]\nmax_parallel = 4\n");
    const folder = tempDir("caesar-flood-others-");
    writeFileSync(join(folder, "piece.txt"), "y".repeat(99).concat("\n").repeat(2_600)); // 260 KB
    const marker = join(folder, "other-ran");
    const report = (summary: string) =>
      `printf '{"protocol":"caesar.report/v1","status":"success","summary":"${summary}"}' > "$CAESAR_REPORT_PATH"`;
    // The flood (13 MB/s at most) goes on until the other task's agent has run, for at least 12 s and at
    // most 156 MB: a service stalled by it would not start the other one before it ends.
    const flood = join(folder, "flood.sh");
    writeFileSync(
      flood,
      `#!/bin/sh\ni=0\nwhile [ ! -e "${marker}" ] && [ $i -lt 600 ]; do cat "${join(folder, "piece.txt")}"; sleep 0.02; i=$((i+1)); done\nif [ -e "${marker}" ]; then echo "the other task ran during the flood"; fi\n${report("flooded")}\n`,
      { mode: 0o755 },
    );
    const other = join(folder, "other.sh");
    writeFileSync(other, `#!/bin/sh\ntouch "${marker}"\n${report("ran")}\n`, { mode: 0o755 });
    // The two agents signal each other through a file outside both their workspaces: no OS sandbox.
    writeConfig(
      root,
      `[sandbox]\nmode = "off"\n[policy]\nmax_parallel = 4\n[[agent]]\nid = "flood"\nbin = "${flood}"\n\n[[agent]]\nid = "other"\nbin = "${other}"\n`,
    );
    git(root, "commit", "-qam", "flood and other");
    const flooding = await detach(root, ["--agent", "flood", "flood"]);
    await until("the flood to start", () => state(root, flooding).phase === "running", 60_000, root);
    const ran = await runCaesar(["run", "--json", "--agent", "other", "other"], {
      cwd: root,
      timeoutMs: 120_000,
    });
    expect(ran.code, ran.stderr).toBe(0);
    await until("the flood to finish", () => state(root, flooding).phase === "finished", 120_000, root);
    expect(state(root, flooding).report?.summary).toBe("flooded");
    const raw = readFileSync(join(taskDir(root, flooding), "raw.log"));
    expect(raw.subarray(-200).toString()).toContain("the other task ran during the flood");
  }, 240_000);

  it("keeps max_parallel = 1 across SIGKILLs of the service: a queued task never starts while a taken-over agent runs", async () => {
    const root = project("[policy]\nmax_parallel = 1\n");
    // Each agent writes when it starts and when it ends, in its task directory (the one folder besides its
    // workspace that it may write under caesar's OS sandbox).
    const agent = join(tempDir("caesar-slots-agent-"), "sleeper.sh");
    writeFileSync(
      agent,
      `#!/bin/sh\necho "start $(date +%s%N)" >> "$CAESAR_TASK_DIR/interval.log"\nsleep 2\necho "end $(date +%s%N)" >> "$CAESAR_TASK_DIR/interval.log"\nprintf '{"protocol":"caesar.report/v1","status":"success","summary":"slept"}' > "$CAESAR_REPORT_PATH"\n`,
      { mode: 0o755 },
    );
    writeConfig(root, `[policy]\nmax_parallel = 1\n[[agent]]\nid = "sleeper"\nbin = "${agent}"\n`);
    git(root, "commit", "-qam", "sleeper");
    const ids: string[] = [];
    for (const name of ["a", "b", "c"]) ids.push(await detach(root, ["--agent", "sleeper", `sleep ${name}`]));
    // Kill the service while agents run (the slot's holder is taken over, its agent alive), again and again.
    for (let kill = 0; kill < 4; kill++) {
      const running = await until("a service", () => service(root), 60_000, root);
      await new Promise((resolve) => setTimeout(resolve, 400 + Math.random() * 800));
      process.kill(running.pid, "SIGKILL");
      const ps = await runCaesar(["ps", "--json"], { cwd: root });
      expect(ps.code, ps.stderr).toBe(0);
    }
    for (const id of ids)
      await until(`${id} to finish`, () => state(root, id).phase === "finished", 90_000, root);
    for (const id of ids) expect(state(root, id).outcome, id).toBe("succeeded");
    // Never two agents at once: each run's interval ends before the next one's starts.
    const intervals = ids
      .map((id) => {
        const lines = readFileSync(join(taskDir(root, id), "interval.log"), "utf8")
          .trim()
          .split("\n");
        // Each agent ran once: one start, one end.
        expect(
          lines.map((line) => line.split(" ")[0]),
          id,
        ).toEqual(["start", "end"]);
        const [start, end] = lines.map((line) => BigInt(line.split(" ")[1]!));
        return { start: start!, end: end! };
      })
      .sort((x, y) => (x.start < y.start ? -1 : 1));
    expect(intervals).toHaveLength(3);
    for (let i = 1; i < intervals.length; i++)
      expect(intervals[i]!.start >= intervals[i - 1]!.end).toBe(true);
  }, 240_000);

  it("a setup command left running by a killed service is stopped by the next one, which starts the task again", async () => {
    const root = project(
      '[worktree]\nsetup = ["echo $$ >> ../setup.pids; [ -e ../once ] || { touch ../once; sleep 300; }"]\n',
    );
    const id = await detach(root, ["--agent", "conformant", "needs its setup"]);
    const pids = join(root, ".caesar", "wt", "setup.pids");
    const setup = await until("the setup to run", () => {
      const current = readJson<{ setup_process: { pid: number } | null }>(
        join(taskDir(root, id), "state.json"),
      );
      return current.setup_process && existsSync(pids) ? current.setup_process : undefined;
    });
    process.kill(service(root)!.pid, "SIGKILL");
    const ps = await runCaesar(["ps", "--json"], { cwd: root });
    expect(ps.code, ps.stderr).toBe(0);
    await until("the task to finish", () => state(root, id).phase === "finished");
    expect(state(root, id)).toMatchObject({ outcome: "succeeded", report: { status: "success" } });
    expect(isProcessAlive(setup.pid)).toBe(false);
    expect(readFileSync(pids, "utf8").trim().split("\n")).toHaveLength(2);
  }, 120_000);

  it("takes a task no one told it about (its front end died before asking) when anything looks at it", async () => {
    const root = project();
    const { createTasks } = await import("../../src/engine/lifecycle/start.js");
    const { resolvePlan } = await import("../../src/engine/lifecycle/plan.js");
    const { PERSON } = await import("../../src/engine/lifecycle/caller.js");
    const { parseDelegationRequest } = await import("../../src/engine/lifecycle/request.js");
    const { plan } = await resolvePlan(
      parseDelegationRequest({ objective: "left behind", agent: "conformant" }),
      {
        root,
        cwd: root,
        caller: PERSON,
      },
    );
    const [created] = await createTasks([plan]);
    const id = created!.record.id;
    expect(state(root, id)).toMatchObject({ phase: "queued", conductor: null });
    const status = await runCaesar(["status", id, "--json"], { cwd: root });
    expect(status.code, status.stderr).toBe(0);
    await until("the task to finish", () => state(root, id).phase === "finished");
    expect(state(root, id)).toMatchObject({ outcome: "succeeded", report: { status: "success" } });
  });

  it("`service stop` waits for its tasks; `--now` leaves them to a new service, which finishes them", async () => {
    const root = project();
    const first = await detach(root, ["--agent", "chatty", "talk a while"], { LINES: "20", PAUSE_S: "0.1" });
    const before = service(root)!;
    const stopped = await runCaesar(["service", "stop", "--json"], { cwd: root });
    expect(parseJsonOutput<{ stopped: boolean; pid: number }>(stopped)).toMatchObject({
      stopped: true,
      pid: before.pid,
    });
    // It returned once its task had ended, not before.
    expect(state(root, first)).toMatchObject({ phase: "finished", outcome: "succeeded" });
    expect(isProcessAlive(before.pid)).toBe(false);

    const second = await detach(root, ["--agent", "chatty", "talk again"], { LINES: "30", PAUSE_S: "0.1" });
    const old = service(root)!;
    await until("the agent to start", () => state(root, second).agent_process);
    const handed = await runCaesar(["service", "stop", "--now", "--json"], { cwd: root });
    expect(parseJsonOutput<{ handed_over: string[] }>(handed).handed_over).toEqual([second]);
    const next = service(root)!;
    expect(next.pid).not.toBe(old.pid);
    await until("the task to finish", () => state(root, second).phase === "finished");
    expect(state(root, second)).toMatchObject({
      outcome: "succeeded",
      report: { summary: "printed 30 lines" },
    });
  }, 120_000);

  it("cancels a task it conducts at once, and exits once idle", async () => {
    const root = project();
    const id = await detach(root, ["--agent", "hang", "hang around"]);
    await until("the agent to start", () => state(root, id).agent_process);
    const agent = state(root, id).agent_process!.pid;
    const cancelled = await runCaesar(["cancel", id, "--json"], { cwd: root });
    expect(parseJsonOutput<{ cancelled: boolean; outcome: string }>(cancelled)).toMatchObject({
      cancelled: true,
      outcome: "cancelled",
    });
    expect(isProcessAlive(agent)).toBe(false);
    // With nothing to do, a service exits after its idle time.
    await runCaesar(["service", "stop"], { cwd: root });
    const idle = spawn(process.execPath, [CAESAR_BIN, "service", "run", "--idle", "1s"], {
      cwd: root,
      stdio: "ignore",
    });
    const code = await new Promise<number | null>((resolve) => idle.on("exit", (exit) => resolve(exit)));
    expect(code).toBe(0);
    expect(service(root)).toBeUndefined();
  });
});
