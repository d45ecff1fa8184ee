import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, expect } from "vitest";
import { runCaesar } from "../helpers/cli.js";
import { git, tempDir, writeFiles } from "../helpers/repo.js";
import { itWith, type Requirement } from "../helpers/system-deps.js";

// A full disk: the project lives on a small tmpfs that an agent fills while its task runs. caesar cannot
// write its records then; it must say so in words (not "Internal error … a bug in caesar"), keep every
// reader working, and finish the task — failed, with `disk_full` — once space returns, never taking a
// record it failed to write for someone else's rewrite.

/** Root, able to mount a tmpfs (CI runs as root; a developer's machine usually is not). */
const TMPFS: Requirement = {
  what: "root, to mount a small tmpfs",
  install: "run the suite as root (CI does)",
  fullTierOnly: true,
  find: () => {
    if (process.getuid?.() !== 0) return undefined;
    const probe = tempDir("caesar-tmpfs-probe-");
    const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", probe]).status === 0;
    if (mounted) spawnSync("umount", [probe]);
    return mounted ? "mount" : undefined;
  },
};

const mounts: string[] = [];
afterAll(() => {
  for (const dir of mounts) spawnSync("umount", ["-l", dir]);
});

interface RunJson {
  task_id: string;
  state: { outcome: string; error?: { code: string; message: string } };
  report: { summary: string; findings: { severity: string; title: string }[] };
}

/** Poll until `check` holds (every 200 ms), or fail saying what was awaited. */
async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

itWith(
  TMPFS,
  "a disk that fills up mid-task: readers keep working, the task is finished failed (disk_full) once space returns",
  async () => {
    const disk = tempDir("caesar-full-disk-");
    expect(spawnSync("mount", ["-t", "tmpfs", "-o", "size=40m", "tmpfs", disk]).status).toBe(0);
    mounts.push(disk);
    const root = join(disk, "repo");
    mkdirSync(root);
    git(root, "init", "--quiet", "--initial-branch=main");
    // The agent prints, fills the disk (in its task directory, outside the repository's tree: the one
    // folder on that device it may write besides its worktree under caesar's OS sandbox), then ends well.
    const agent = join(root, ".caesar", "fill.sh");
    writeFiles(root, {
      "README.md": "# full disk\n",
      ".gitignore": ".caesar/tasks/\n.caesar/wt/\n.caesar/state/\n",
      ".caesar/config.toml": '[[agent]]\nid = "filler"\nbin = "fill.sh"\nargs = ["{{prompt}}"]\n',
      ".caesar/fill.sh": `#!/bin/sh\ni=0\nwhile [ $i -lt 200 ]; do echo "line $i"; i=$((i+1)); done\ndd if=/dev/zero of="$CAESAR_TASK_DIR/filler" bs=1M count=100 2>/dev/null\necho done > out.txt\nexit 0\n`,
    });
    chmodSync(agent, 0o755);
    git(root, "add", ".");
    git(root, "commit", "--quiet", "-m", "initial");

    const run = runCaesar(["run", "--json", "--agent", "filler", "fill the disk"], {
      cwd: root,
      timeoutMs: 180_000,
    });
    const serviceLog = join(root, ".git", "caesar", "service", "service.log");
    await waitFor(
      () =>
        existsSync(serviceLog) && readFileSync(serviceLog, "utf8").includes("No space left on the device"),
      120_000,
      "the service to meet the full disk",
    );

    // While the disk is full: readers still read, and a command that must write says why it cannot.
    const ps = await runCaesar(["ps", "--all"], { cwd: root });
    expect(ps.code).toBe(0);
    expect(ps.stdout).toContain("fill the disk");
    const another = await runCaesar(["run", "--json", "--agent", "filler", "another"], { cwd: root });
    expect(another.code).toBe(1);
    const refusal = JSON.parse(another.stdout) as { error: { code: string; summary: string } };
    expect(refusal.error.code).toBe("disk_full");
    expect(another.stderr + another.stdout).not.toContain("a bug in caesar");

    // Space returns: the task is finished, failed, saying why — and nothing is taken for tampering.
    const tasks = join(root, ".caesar", "tasks");
    const fillers = readdirSync(tasks)
      .map((id) => join(tasks, id, "filler"))
      .filter((path) => existsSync(path));
    expect(fillers).toHaveLength(1);
    rmSync(fillers[0]!);
    const result = await run;
    expect(result.code).toBe(1);
    const body = JSON.parse(result.stdout) as RunJson;
    expect(body.state.outcome).toBe("failed");
    expect(body.state.error?.code).toBe("disk_full");
    expect(body.report.summary).toContain("No space left on the device");
    expect(body.report.findings.map((f) => f.title).join("\n")).not.toMatch(/rewr/i);
    const events = readFileSync(join(root, ".caesar", "tasks", body.task_id, "events.jsonl"), "utf8");
    expect(events.match(/"type":"finished"/g)).toHaveLength(1);
    // Its worktree is kept, with what the agent did.
    const status = await runCaesar(["diff", body.task_id, "--stat"], { cwd: root });
    expect(status.stdout).toContain("out.txt");
  },
  240_000,
);
