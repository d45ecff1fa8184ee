import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { CAESAR_BIN, runCaesar } from "../helpers/cli.js";
import { ago, FixtureProject, removeFixtureProjects } from "./fixture-project.js";

/** Colour would be on if caesar decided by TERM alone: the tests check it decides by more. */
const COLOR_ENV = { NO_COLOR: "", TERM: "xterm-256color", COLORTERM: "truecolor", LANG: "C.UTF-8" };

function twoTasks(): FixtureProject {
  const project = new FixtureProject();
  project.writeState("t_aaaa0001", {
    agent: "codex",
    objective: "Run the slow suite",
    started_at: ago(10 * 60_000),
  });
  project.appendEvents("t_aaaa0001", [
    { type: "started", agent: "codex", at: ago(10 * 60_000) },
    {
      type: "tool_use",
      tool: "bash",
      id: "item_1",
      input_summary: "npm run test:slow",
      status: "started",
      at: ago(4 * 60_000),
    },
  ]);
  project.writeState("t_bbbb0002", { agent: "claude", objective: "Add a cache", started_at: ago(60_000) });
  project.appendEvents("t_bbbb0002", [
    { type: "started", agent: "claude", at: ago(60_000) },
    { type: "message", text: "Looking at \x1b[31mthe client\x1b[0m", at: ago(20_000) },
    { type: "question", question_id: "q_1", question: "TTL or invalidate on write?", at: ago(10_000) },
  ]);
  return project;
}

/** Every file under a directory with its size, mtime and content hash. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (path: string) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) {
        out[`${full}/`] = String(statSync(full).mtimeMs);
        walk(full);
      } else {
        const stat = statSync(full);
        out[full] =
          `${stat.size} ${stat.mtimeMs} ${createHash("sha1").update(readFileSync(full)).digest("hex")}`;
      }
    }
  };
  walk(dir);
  return out;
}

/** A running `caesar watch` whose output is read as it comes. */
class Watcher {
  readonly child: ChildProcess;
  stdout = "";
  stderr = "";
  readonly exited: Promise<number | null>;

  constructor(args: string[], env: NodeJS.ProcessEnv = {}) {
    this.child = spawn(process.execPath, [CAESAR_BIN, "watch", ...args], {
      env: { ...process.env, NO_COLOR: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      this.stdout += chunk;
    });
    this.child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      this.stderr += chunk;
    });
    this.exited = new Promise((resolve) => this.child.on("close", (code) => resolve(code)));
  }

  async waitFor(predicate: (stdout: string) => boolean, what: string, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.stdout)) {
      if (Date.now() > deadline) {
        throw new Error(
          `caesar watch never printed ${what}\nstdout:\n${this.stdout}\nstderr:\n${this.stderr}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

const running: Watcher[] = [];
afterEach(() => {
  for (const watcher of running.splice(0)) watcher.child.kill("SIGKILL");
});
afterAll(() => removeFixtureProjects());

describe("caesar watch --once", () => {
  it("prints the screen without redraw or ANSI outside a terminal: question on top, the running tool, silence", async () => {
    const project = twoTasks();
    const result = await runCaesar(["watch", "--once", "--root", project.root], { env: COLOR_ENV });
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain("\x1b");
    const lines = result.stdout.split("\n");
    expect(lines[0]).toMatch(/^caesar watch {2}2 running · 1 question · 1 silent/);
    expect(lines[2]).toMatch(/^\? t_bbbb0002 asks {2}q_1 · [0-9ms]+ ago$/);
    expect(lines[3]).toBe("  TTL or invalidate on write?");
    expect(lines[4]).toBe('  answer → caesar answer t_bbbb0002 q_1 "<text>"');
    expect(result.stdout).toMatch(/! t_aaaa0001 .* ! silent 4m\d\ds/);
    expect(result.stdout).toMatch(/▸ bash {2}npm run test:slow · 4m\d\ds/);
  });

  it("shows only the tasks named, by unique prefix", async () => {
    const project = twoTasks();
    const result = await runCaesar(["watch", "--once", "--root", project.root, "t_aaaa"]);
    expect(result.stdout).toContain("t_aaaa0001");
    expect(result.stdout).not.toContain("t_bbbb0002");
  });

  it("refuses a task that does not exist", async () => {
    const project = twoTasks();
    const result = await runCaesar(["watch", "--once", "--json", "--root", project.root, "t_nope"]);
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout).error.code).toBe("task_not_found");
  });

  it("--json prints the events of all watched tasks as NDJSON in time order, never with ANSI", async () => {
    const project = twoTasks();
    const result = await runCaesar(["watch", "--once", "--json", "--root", project.root], {
      env: { ...COLOR_ENV, FORCE_COLOR: "3" },
    });
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain("\x1b");
    const events = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { task_id: string; type: string; at: string; text?: string });
    expect(events.map((e) => `${e.task_id} ${e.type}`)).toEqual([
      "t_aaaa0001 started",
      "t_aaaa0001 tool_use",
      "t_bbbb0002 started",
      "t_bbbb0002 message",
      "t_bbbb0002 question",
    ]);
    // The event is passed on as written: its escape character survives, escaped by JSON.
    expect(events[3]!.text).toBe("Looking at \x1b[31mthe client\x1b[0m");
  });

  it("changes nothing in the task directories", async () => {
    const project = twoTasks();
    project.writeQuestionFile("t_aaaa0001", "q_9", "Proceed?");
    const before = snapshot(project.root);
    await runCaesar(["watch", "--once", "--root", project.root]);
    await runCaesar(["watch", "--once", "--json", "--root", project.root]);
    const watcher = new Watcher(["--root", project.root]);
    running.push(watcher);
    await watcher.waitFor((out) => out.includes("Proceed?"), "the question file");
    watcher.child.kill("SIGINT");
    expect(await watcher.exited).toBe(0);
    expect(snapshot(project.root)).toEqual(before);
  });
});

describe("caesar watch outside a terminal", () => {
  it("prints one line per event as events are appended, and stops when the named tasks finish", async () => {
    const project = twoTasks();
    const watcher = new Watcher(["t_aaaa0001", "--root", project.root], COLOR_ENV);
    running.push(watcher);
    await watcher.waitFor((out) => out.includes("▸ bash  npm run test:slow"), "the history");
    expect(watcher.stdout).toMatch(/^\d\d:\d\d:\d\d t_aaaa0001 {2}start {4}codex\n/);
    project.appendEvents("t_aaaa0001", [
      { seq: 2, type: "tool_use", tool: "", id: "item_1", status: "succeeded" },
      {
        seq: 3,
        type: "tool_use",
        tool: "Read",
        id: "item_2",
        input_summary: "src/slow.ts",
        status: "started",
      },
    ]);
    await watcher.waitFor((out) => out.includes("▸ Read  src/slow.ts"), "the new tool");
    expect(watcher.stdout).toMatch(/t_aaaa0001 {2}tool {5}✓ bash {2}npm run test:slow {2}4m\d\ds\n/);
    project.writeState("t_aaaa0001", {
      phase: "finished",
      finished_at: new Date().toISOString(),
      outcome: "succeeded",
      report_status: "success",
    });
    expect(await watcher.exited).toBe(0);
    // No finished event in the stream: the line comes from state.json.
    expect(watcher.stdout).toMatch(/t_aaaa0001 {2}done {5}✓ success\n$/);
    expect(watcher.stdout).not.toContain("\x1b");
  });

  it("prints one done line when the finished event follows the final state (the conductor's order)", async () => {
    const project = twoTasks();
    const watcher = new Watcher(["t_bbbb0002", "--root", project.root]);
    running.push(watcher);
    await watcher.waitFor((out) => out.includes("caesar answer t_bbbb0002 q_1"), "the history");
    project.writeState("t_bbbb0002", {
      phase: "finished",
      // watch waits 2 s past finished_at for the event; dated ahead so that a stalled test process
      // between these two writes cannot outlast that grace (the conductor writes them ms apart).
      finished_at: new Date(Date.now() + 10_000).toISOString(),
      outcome: "succeeded",
      report_status: "partial",
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    project.appendEvents("t_bbbb0002", [
      { seq: 3, type: "finished", status: "partial", summary: "Half done", outcome: "succeeded" },
    ]);
    expect(await watcher.exited).toBe(0);
    expect(watcher.stdout.match(/ done /g)).toHaveLength(1);
    expect(watcher.stdout).toMatch(/t_bbbb0002 {2}done {5}! partial · Half done\n$/);
  });

  it("--json follows every running task, including one that starts later, until interrupted", async () => {
    const project = twoTasks();
    const watcher = new Watcher(["--json", "--root", project.root]);
    running.push(watcher);
    await watcher.waitFor((out) => out.split("\n").length > 5, "the history");
    project.writeState("t_cccc0003", { agent: "gemini" });
    project.appendEvents("t_cccc0003", [{ type: "started", agent: "gemini" }]);
    await watcher.waitFor((out) => out.includes('"task_id":"t_cccc0003"'), "the new task's events");
    project.writeQuestionFile("t_cccc0003", "q_2", "Asked through the channel");
    watcher.child.kill("SIGINT");
    expect(await watcher.exited).toBe(0);
    for (const line of watcher.stdout.trim().split("\n"))
      expect(JSON.parse(line).protocol).toBe("caesar.event/v1");
  });
});
