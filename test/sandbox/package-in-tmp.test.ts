import { cpSync } from "node:fs";
import { join } from "node:path";
import { describe, expect } from "vitest";
import { PACKAGE_ROOT } from "../../src/support/package-paths.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { git, makeRepo, tempDir, writeFiles } from "../helpers/repo.js";
import { itWith } from "../helpers/system-deps.js";
import { BUBBLEWRAP, type RunJson } from "./probe-project.js";

// caesar itself under /tmp (a clone there, as a newcomer may make one): the sandbox's /tmp is its own, and
// the bundled reference agent's script — caesar's own package — must stay visible in it, read-only.
describe("caesar's package under /tmp", () => {
  itWith(BUBBLEWRAP, "its bundled reference agent runs in the OS sandbox all the same", async () => {
    const copy = tempDir("caesar-package-");
    expect(copy.startsWith("/tmp/"), `the test's temporary folder is under /tmp: ${copy}`).toBe(true);
    for (const part of ["bin", "dist", "agents", "web", "package.json"])
      cpSync(join(PACKAGE_ROOT, part), join(copy, part), { recursive: true });
    const launcher = join(copy, "bin", "caesar.js");
    const root = makeRepo({ "README.md": "# project\n" });
    writeFiles(root, { ".caesar/config.toml": '[sandbox]\nmode = "required"\n' });
    git(root, "add", ".");
    git(root, "commit", "-qm", "sandboxed");
    try {
      const result = await runCaesar(
        ["run", "--json", "--agent", "reference", 'create notes.txt containing "hi"'],
        { cwd: root, launcher, timeoutMs: 120_000 },
      );
      const body = parseJsonOutput<RunJson>(result);
      expect(body.state.outcome, result.stdout).toBe("succeeded");
      expect(body.state.report.changes.map((change) => change.path)).toEqual(["notes.txt"]);
    } finally {
      await runCaesar(["service", "stop", "--now"], { cwd: root, launcher });
    }
  });
});
