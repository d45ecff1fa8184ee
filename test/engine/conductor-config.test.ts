import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CAESAR_BIN, parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { FIXTURE_BIN, makeRepo, tempDir } from "../helpers/repo.js";

// The conductor service may have been started by any front end — one an agent ran, with an XDG_CONFIG_HOME
// of its choosing. The tasks it conducts are governed by the global configuration they were planned
// with, never by the one in the service's own environment.

function globalConfig(body: string): string {
  const xdg = tempDir("caesar-xdg-");
  mkdirSync(join(xdg, "caesar"), { recursive: true });
  writeFileSync(join(xdg, "caesar", "config.toml"), body);
  return xdg;
}

async function until(what: string, probe: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await probe()); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe("a conductor service started with another global configuration", () => {
  it("conducts a task with the configuration the task was planned with", async () => {
    const root = makeRepo();
    const marks = tempDir("caesar-marks-");
    const impostor = join(marks, "impostor.sh");
    writeFileSync(impostor, `#!/bin/sh\ntouch "${join(marks, "impostor-ran")}"\n`);
    chmodSync(impostor, 0o755);
    const person = globalConfig(`[[agent]]\nid = "tool"\nbin = "${join(FIXTURE_BIN, "conformant.sh")}"\n`);
    const planted = globalConfig(`[[agent]]\nid = "tool"\nbin = "${impostor}"\n`);

    const service = spawn(process.execPath, [CAESAR_BIN, "service", "run", "--idle", "2m"], {
      cwd: root,
      env: { ...process.env, XDG_CONFIG_HOME: planted },
      stdio: "ignore",
    });
    try {
      await until("the service", async () => {
        const status = await runCaesar(["service", "status", "--json"], { cwd: root });
        return parseJsonOutput<{ running: boolean }>(status).running;
      });
      const run = await runCaesar(["run", "--json", "--agent", "tool", "the person's task"], {
        cwd: root,
        env: { XDG_CONFIG_HOME: person },
        timeoutMs: 120_000,
      });
      expect(run.code, run.stderr).toBe(0);
      const body = parseJsonOutput<{ report: { summary: string } }>(run);
      expect(body.report.summary).toBe("Handled: the person's task");
      expect(existsSync(join(marks, "impostor-ran"))).toBe(false);
    } finally {
      service.kill("SIGTERM");
    }
  }, 180_000);
});
