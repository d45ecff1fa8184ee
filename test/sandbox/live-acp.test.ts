import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { describeSandboxed, runSandboxedCli } from "./live-clis-helper.js";

// The CLIs' ACP modes under caesar's OS sandbox (`[sandbox] mode = "required"`), each against
// `caesar mock-model`: each keeps its state in its CLI mode's home of the task's, reaches its model with the
// network off, writes its worktree in a write task and nothing in a read-only one.

const LIVE_TIMEOUT_MS = 320_000;

/** Each ACP agent and the program it starts (what must be installed). */
const ACP: Record<string, string> = {
  "gemini-acp": "gemini",
  "opencode-acp": "opencode",
  "copilot-acp": "copilot",
  "codex-acp": "codex-acp",
  "claude-acp": "claude-agent-acp",
};

for (const [agent, bin] of Object.entries(ACP)) {
  describeSandboxed(agent, bin, (cleanup) => {
    it(
      "a write task's command writes its worktree, the network off but its model reached",
      async () => {
        const run = await runSandboxedCli(agent, "echo OK > hello.txt", [
          "--mode",
          "write",
          "--network",
          "off",
        ]);
        cleanup(run.root);
        expect(run.outcome, run.output.slice(-3000)).toBe("succeeded");
        expect(readFileSync(join(run.worktree, "hello.txt"), "utf8")).toBe("OK\n");
      },
      LIVE_TIMEOUT_MS,
    );

    it(
      "a read-only task's write lands nowhere: caesar's policy refuses the command, the kernel would too",
      async () => {
        const run = await runSandboxedCli(agent, "echo pwned > ro.txt; echo pwned >> README.md", [
          "--mode",
          "read-only",
        ]);
        cleanup(run.root);
        const workspace = run.worktree || run.root;
        expect(existsSync(join(workspace, "ro.txt")), run.output.slice(-3000)).toBe(false);
        expect(readFileSync(join(workspace, "README.md"), "utf8")).toBe("# sandboxed\n");
        expect(readFileSync(join(run.root, "README.md"), "utf8")).toBe("# sandboxed\n");
      },
      LIVE_TIMEOUT_MS,
    );
  });
}
