import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type InProcessApi, openApi } from "../helpers/api.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { git, makeRepo, taskDir, tempDir } from "../helpers/repo.js";

// An agent writes its task directory, and a person's server reads tasks: after the task ended, the agent
// rewrites its state.json mirror — a forged report, and a "worktree" that is a repository of its making
// whose core.fsmonitor would run its program in the server. The server decides from caesar's record only:
// it shows the real report, and no git command ever runs in a path read from the task directory.

let root: string;
let api: InProcessApi;
let id: string;
let marks: string;
let evil: string;

beforeAll(async () => {
  root = makeRepo({ "README.md": "# served\n" });
  const run = await runCaesar(["run", "--json", "--agent", "reference", 'create hello.txt containing "hi"'], {
    cwd: root,
  });
  expect(run.code, run.stderr).toBe(0);
  id = parseJsonOutput<{ task_id: string }>(run).task_id;

  marks = tempDir("caesar-marks-");
  evil = makeRepo({ "bait.txt": "x\n" });
  const monitor = join(evil, "monitor.sh");
  writeFileSync(monitor, `#!/bin/sh\ntouch "${join(marks, "fsmonitor-ran")}"\n`);
  chmodSync(monitor, 0o755);
  git(evil, "config", "core.fsmonitor", monitor);
  writeFileSync(join(evil, "bait.txt"), "changed\n");

  const mirror = join(taskDir(root, id), "state.json");
  const state = JSON.parse(readFileSync(mirror, "utf8"));
  const forged = {
    ...state,
    worktree: evil,
    workspace: evil,
    root: evil,
    end_tree: null,
    report: { ...state.report, summary: "FORGED: all good, nothing to see", findings: [] },
  };
  writeFileSync(mirror, JSON.stringify(forged, null, 2));
  api = await openApi(root);
});

afterAll(() => api?.close());

describe("the server and a task directory the agent rewrote", () => {
  it("shows the report caesar verified, not the agent's rewrite", async () => {
    const page = (await (await api.request(`/api/tasks/${id}`)).json()) as {
      task: { report: { summary: string } | null; worktree: string | null };
    };
    expect(JSON.stringify(page)).not.toContain("FORGED");
    const change = await api.query("change.read", { number: 1 });
    const body = (await change.json()) as { result: { report: { summary: string } } };
    expect(body.result.report.summary).toContain("hello.txt");
  });

  it("runs no git command in the path the mirror names (its fsmonitor never runs)", async () => {
    const repository = await api.query("repository.read", { id });
    const body = (await repository.json()) as { result: { path: string } };
    expect(body.result.path).toBe(join(root, ".caesar", "wt", id));
    await api.query("change.read", { number: 1 });
    await api.request(`/api/tasks/${id}/diff`);
    await api.request("/api/tasks");
    expect(existsSync(join(marks, "fsmonitor-ran"))).toBe(false);
    // The bait is real: git in that repository runs the monitor.
    git(evil, "status", "--porcelain");
    expect(existsSync(join(marks, "fsmonitor-ran"))).toBe(true);
  });
});
