import { cpSync, existsSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { checkSnapshot } from "../../src/support/startup-snapshot.js";
import { CAESAR_LAUNCHER, type CliResult, parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { makeRepo, taskDir, tempDir, writeConfig } from "../helpers/repo.js";

// `caesar run` starts its two processes (the front end and the conductor) from V8 startup snapshots built
// by `npm run build` — and from the ES module bundles whenever a snapshot would not match.

const PACKAGE = fileURLToPath(new URL("../..", import.meta.url));

interface RunJson {
  task_id: string;
  state: { outcome: string };
  report: { status: string; summary: string; changes_verified_by: string };
}

/** The installed package's files, copied elsewhere (as a moved install would be). */
function copyOfPackage(prefix: string): string {
  const copy = tempDir(prefix);
  for (const entry of ["bin", "dist", "agents", "web", "package.json"])
    cpSync(join(PACKAGE, entry), join(copy, entry), { recursive: true });
  return copy;
}

function project(): string {
  const root = makeRepo();
  writeConfig(root, "", ["conformant"]);
  return root;
}

/** Run a task with phase tracing on: which process started from a snapshot, and did the task work? */
async function tracedRun(root: string, env: NodeJS.ProcessEnv = {}, launcher?: string) {
  const args = ["run", "--json", "--agent", "conformant", "Fix the parser"];
  const result: CliResult = await runCaesar(args, {
    cwd: root,
    env: { CAESAR_TRACE: "1", ...env },
    ...(launcher ? { launcher } : {}),
  });
  expect(result.code, result.stderr).toBe(0);
  const body = parseJsonOutput<RunJson>(result);
  expect(body.report.status).toBe("success");
  expect(body.report.summary).toBe("Handled: Fix the parser");
  expect(body.report.changes_verified_by).toBe("git");
  const conductorLog = readFileSync(join(taskDir(root, body.task_id), "conductor.log"), "utf8");
  return {
    frontEnd: result.stderr.includes("cli: from snapshot"),
    conductor: conductorLog.includes("conductor: from snapshot"),
  };
}

describe("startup snapshots", () => {
  it("were built for this Node by npm run build", () => {
    const check = checkSnapshot("conductor", {});
    expect(check, JSON.stringify(check)).toMatchObject({ usable: true });
    expect(existsSync(join(PACKAGE, "dist", "snapshot", "cli.blob"))).toBe(true);
  });

  it("start both of caesar run's processes when they match", async () => {
    expect(await tracedRun(project())).toEqual({ frontEnd: true, conductor: true });
  });

  it("give `caesar run` the same help and usage errors as the full CLI", async () => {
    for (const args of [["run", "--help"], ["run", "--bogus", "x"], ["run"]]) {
      const fast = await runCaesar(args, { env: { CAESAR_TRACE: "1" } });
      const full = await runCaesar(args, { env: { CAESAR_NO_SNAPSHOT: "1" } });
      expect(fast.stderr).toContain("cli: from snapshot");
      const untraced = fast.stderr.replace(/^\[trace\].*\n/gm, "");
      expect({ code: fast.code, stdout: fast.stdout, stderr: untraced }).toEqual({
        code: full.code,
        stdout: full.stdout,
        stderr: full.stderr,
      });
    }
  });

  it("are not used with CAESAR_NO_SNAPSHOT=1, and the task runs the same", async () => {
    expect(await tracedRun(project(), { CAESAR_NO_SNAPSHOT: "1" })).toEqual({
      frontEnd: false,
      conductor: false,
    });
  });

  it("are not used when NODE_OPTIONS is set (its V8 flags would not match the snapshot's)", async () => {
    expect(await tracedRun(project(), { NODE_OPTIONS: "--max-old-space-size=512" })).toEqual({
      frontEnd: false,
      conductor: false,
    });
  });

  it("are found through a symlink to the launcher, as package managers install it", async () => {
    const bin = tempDir("caesar-bin-");
    symlinkSync(CAESAR_LAUNCHER, join(bin, "caesar"));
    expect(await tracedRun(project(), {}, join(bin, "caesar"))).toEqual({
      frontEnd: true,
      conductor: true,
    });
  });

  it("are not used by a copy of the package moved elsewhere (their paths are the build's)", async () => {
    const copy = copyOfPackage("caesar-moved-");
    expect(checkSnapshot("conductor", {}).usable).toBe(true);
    expect(await tracedRun(project(), {}, join(copy, "bin", "caesar"))).toEqual({
      frontEnd: false,
      conductor: false,
    });
  });

  it("cost speed, never a task, when the conductor's fails to load: another conductor takes over", async () => {
    // A copy of the package whose conductor snapshot claims to match it but is damaged (same size).
    const copy = copyOfPackage("caesar-damaged-");
    const snapshot = join(copy, "dist", "snapshot");
    const meta = JSON.parse(readFileSync(join(snapshot, "meta.json"), "utf8"));
    writeFileSync(join(snapshot, "meta.json"), JSON.stringify({ ...meta, packageRoot: realpathSync(copy) }));
    const blob = join(snapshot, "conductor.blob");
    const bytes = readFileSync(blob);
    bytes.fill(0, 0, 64);
    writeFileSync(blob, bytes);
    const root = project();
    const result = await runCaesar(["run", "--json", "--agent", "conformant", "Fix the parser"], {
      cwd: root,
      launcher: join(copy, "bin", "caesar"),
    });
    expect(result.code, result.stderr).toBe(0);
    const body = parseJsonOutput<RunJson>(result);
    expect(body.report.status).toBe("success");
    const log = readFileSync(join(taskDir(root, body.task_id), "conductor.log"), "utf8");
    expect(log).toMatch(
      /conductor \d+ ended before starting the task \(killed by SIGABRT\); starting another/,
    );

    // With --detach too: the front end waits for a conductor to claim the task before it exits.
    const detached = await runCaesar(["run", "--detach", "--json", "--agent", "conformant", "Again"], {
      cwd: root,
      launcher: join(copy, "bin", "caesar"),
    });
    expect(detached.code, detached.stderr).toBe(0);
    const { task_id: id } = parseJsonOutput<{ task_id: string }>(detached);
    const stateFile = join(taskDir(root, id), "state.json");
    const stateNow = () => JSON.parse(readFileSync(stateFile, "utf8"));
    expect(stateNow().conductor?.pid).toBeGreaterThan(0);
    const deadline = Date.now() + 30_000;
    while (stateNow().phase !== "finished" && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    expect(stateNow()).toMatchObject({ phase: "finished", outcome: "succeeded" });
  });

  it("are not used when the Node on PATH is not the one that built them", async () => {
    // A directory on PATH whose `node` is a different file (a wrapper around the real one).
    const other = tempDir("caesar-node-");
    writeFileSync(join(other, "node"), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} "$@"\n`, {
      mode: 0o755,
    });
    const result = await tracedRun(project(), { PATH: `${other}:${process.env.PATH}` });
    expect(result.frontEnd).toBe(false);
  });
});

describe("checkSnapshot", () => {
  it("says why a snapshot is not used", () => {
    expect(checkSnapshot("cli", { CAESAR_NO_SNAPSHOT: "1" })).toEqual({
      usable: false,
      reason: "turned off by CAESAR_NO_SNAPSHOT=1",
    });
    expect(checkSnapshot("cli", { NODE_OPTIONS: "--inspect" })).toEqual({
      usable: false,
      reason: "NODE_OPTIONS is set",
    });
  });
});
