import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CAESAR_BIN, parseJsonOutput, runCaesar } from "../../helpers/cli.js";
import { git, makeRepo, readJson, taskDir, tempDir, writeConfig } from "../../helpers/repo.js";

// A brokered command (CAESAR_BROKER_CALLER) is believed when its parent is the project's service or a live
// cluster worker recorded in `<control dir>/workers/<pid>.json`. Out of the OS sandbox an agent can write
// that folder: a record naming itself must not let its own `caesar` pass for another running task — the
// task named must be conducted by that very parent.
describe("a worker record an unsandboxed agent writes for itself", () => {
  it("does not make its command pass for another running task", async () => {
    const root = makeRepo({ "README.md": "# project\n" });
    const folder = tempDir("caesar-forge-agents-");
    const victimFile = join(folder, "victim-id");
    const report = (summary: string) =>
      `printf '{"protocol":"caesar.report/v1","status":"success","summary":"${summary}"}' > "$CAESAR_REPORT_PATH"`;
    const agents: Record<string, string> = {
      victim: `sleep 30\n${report("victim")}`,
      probe: report("probe"),
      forger: [
        "common=$(git rev-parse --path-format=absolute --git-common-dir)",
        'mkdir -p "$common/caesar/workers"',
        'printf \'{"pid": %s}\' $$ > "$common/caesar/workers/$$.json"',
        `CAESAR_BROKER_CALLER="$(cat "${victimFile}")" "${process.execPath}" "${CAESAR_BIN}" run --json --agent probe "as the victim" > "$CAESAR_TASK_DIR/forged.json" 2>&1`,
        'echo "exit $?" >> "$CAESAR_TASK_DIR/forged.json"',
        report("forged"),
      ].join("\n"),
    };
    const config = Object.entries(agents).map(([id, script]) => {
      const bin = join(folder, `${id}.sh`);
      writeFileSync(bin, `#!/bin/sh\n${script}\n`, { mode: 0o755 });
      return `[[agent]]\nid = "${id}"\nbin = "${bin}"\n`;
    });
    writeConfig(
      root,
      `[sandbox]\nmode = "off"\n[policy]\nallow_recursion = true\nmax_parallel = 4\n\n[risk_profiles.default]\ndelegation_policy = { mode = "allow" }\n\n${config.join("\n")}`,
    );
    git(root, "add", ".caesar/config.toml");
    git(root, "commit", "-qm", "agents");

    const started = await runCaesar(["run", "--detach", "--json", "--agent", "victim", "victim"], {
      cwd: root,
    });
    expect(started.code, started.stderr).toBe(0);
    const victim = parseJsonOutput<{ task_id: string }>(started).task_id;
    writeFileSync(victimFile, victim);
    for (let i = 0; i < 300; i++) {
      if (readJson<{ phase: string }>(join(taskDir(root, victim), "state.json")).phase === "running") break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    try {
      const forger = await runCaesar(["run", "--json", "--agent", "forger", "forge"], {
        cwd: root,
        timeoutMs: 120_000,
      });
      expect(forger.code, forger.stderr).toBe(0);
      const id = parseJsonOutput<{ task_id: string }>(forger).task_id;
      const said = readFileSync(join(taskDir(root, id), "forged.json"), "utf8");
      expect(said).toContain("nested_unproven");
      expect(said).not.toContain(`"parent_id": "${victim}"`);
    } finally {
      await runCaesar(["cancel", victim], { cwd: root });
    }
  }, 180_000);
});
