import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { mockSetupFor, writeSetupFiles } from "../../src/mock-model/agent-env.js";
import { parseScenario } from "../../src/mock-model/scenario.js";
import { startMockModel } from "../../src/mock-model/server.js";
import { agentStateFor } from "../helpers/agent-state.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { AGENT_BIN_DIR, agentBinAvailable } from "../helpers/live-agent.js";
import { git, taskDir, tempDir, writeFiles } from "../helpers/repo.js";
import { pinnedAgentCli, standInForMissing } from "../helpers/system-deps.js";

/**
 * docs/threat-model.md says codex's sandbox keeps an agent from writing caesar's records: checked here
 * with the real, pinned codex CLI against `caesar mock-model`. Its shell tool tries to write the control
 * directory (`.git/caesar`), another task's directory and the user's checkout; only its own worktree
 * takes the write.
 */
/**
 * A repository outside /tmp and $TMPDIR: codex's workspace-write leaves both writable, so a project there
 * gets no protection from its sandbox (docs/threat-model.md says so). Removed after the test.
 */
function repoOutsideTmp(config: string): string {
  const parent = mkdtempSync(join(homedir(), ".caesar-sandbox-test-"));
  outside.push(parent);
  const root = join(parent, "repo");
  mkdirSync(root);
  git(root, "init", "-q", "--initial-branch=main");
  writeFiles(root, {
    "README.md": "# sandboxed\n",
    ".gitignore": ".caesar/tasks/\n.caesar/wt/\n.caesar/state/\n.caesar/chat/\n",
  });
  writeFiles(root, { ".caesar/config.toml": config });
  git(root, "add", ".");
  git(root, "commit", "-qm", "initial");
  return root;
}

const outside: string[] = [];
afterAll(() => {
  for (const dir of outside) rmSync(dir, { recursive: true, force: true });
});

async function runCodex(root: string, args: string[], command: string) {
  const state = tempDir("caesar-sandbox-");
  const home = join(state, "home");
  mkdirSync(home, { recursive: true });
  const scenario = parseScenario(
    JSON.stringify({
      name: "probe",
      steps: [{ shell: command }, { report: { status: "success", summary: "probed" } }],
    }),
  );
  const server = await startMockModel({ scenario });
  try {
    const setup = mockSetupFor("codex", server.url, agentStateFor(state));
    await writeSetupFiles(setup);
    const result = await runCaesar(["run", "--json", "--agent", "codex", ...args, "probe"], {
      cwd: root,
      timeoutMs: 180_000,
      env: {
        PATH: `${AGENT_BIN_DIR}:${process.env.PATH ?? "/usr/bin:/bin"}`,
        HOME: home,
        XDG_CONFIG_HOME: join(home, ".config"),
        ...setup.env,
      },
    });
    return parseJsonOutput<{ task_id: string; state: { outcome: string } }>(result);
  } finally {
    await server.close();
  }
}

const probe = (paths: string[]) =>
  paths
    .map((path) => `(echo x > '${path}') 2>/dev/null && echo "WROTE ${path}" || echo "DENIED ${path}"`)
    .join("; ");

describe("codex's sandbox and caesar's records (live)", () => {
  if (!agentBinAvailable("codex")) {
    standInForMissing(pinnedAgentCli("codex"));
    return;
  }
  it("a worktree task writes its worktree, never the control directory, another task's directory or the user's tree", async () => {
    const root = repoOutsideTmp("");
    const sibling = join(root, ".caesar", "tasks", "t_0000beef");
    mkdirSync(sibling, { recursive: true });
    const targets = [join(root, ".git", "caesar", "probe"), join(sibling, "probe"), join(root, "probe.txt")];
    const out = await runCodex(root, ["--mode", "write"], `echo ok > mine.txt; ${probe(targets)}`);
    expect(out.state.outcome).toBe("succeeded");
    for (const target of targets) expect(existsSync(target), target).toBe(false);
    expect(existsSync(join(root, ".caesar", "wt", out.task_id, "mine.txt"))).toBe(true);
    expect(git(root, "status", "--porcelain")).toBe("");
  }, 240_000);

  it("an in-place write task (allow_inplace_write) still cannot write .git, where caesar keeps its records", async () => {
    const root = repoOutsideTmp("[policy]\nallow_inplace_write = true\n");
    const records = join(root, ".git", "caesar", "probe");
    const out = await runCodex(
      root,
      ["--mode", "write", "--isolation", "inplace"],
      `echo ok > mine.txt; ${probe([records])}`,
    );
    expect(existsSync(records)).toBe(false);
    expect(existsSync(join(root, "mine.txt"))).toBe(true);
    expect(existsSync(join(taskDir(root, out.task_id), "state.json"))).toBe(true);
  }, 240_000);
});
