import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect } from "vitest";
import { BUILTIN_ADAPTERS } from "../../src/agents/catalog.js";
import { created, runLive } from "../helpers/live-agent.js";
import { itWith, pinnedAgentCli } from "../helpers/system-deps.js";

/**
 * `[agents.<id>] excluded_tools`, applied by the real CLIs that can. claude and opencode remove the tool:
 * it is no longer offered to the model (as the mock model's request log shows). copilot keeps offering it
 * and refuses the call, which the adapter reports as a finding. Either way the shell command never runs.
 */
const CASES = [
  { cli: "claude", shell: "Bash", excluded: "Bash", how: "removed" },
  { cli: "copilot", shell: "bash", excluded: "shell", how: "denied" },
  { cli: "opencode", shell: "bash", excluded: "bash", how: "removed" },
] as const;

afterEach(() => {
  if (process.env.CAESAR_KEEP_LIVE === "1") return;
  for (const dir of created) rmSync(dir, { recursive: true, force: true });
  created.length = 0;
});

describe("live: excluded tools", () => {
  for (const { cli, shell, excluded, how } of CASES) {
    itWith(
      pinnedAgentCli(cli),
      `${cli}: excluding "${excluded}" keeps the model from running its shell tool`,
      async () => {
        const adapter = BUILTIN_ADAPTERS.find((candidate) => candidate.id === cli)!;
        expect(adapter.capabilities.tools.value).not.toBe("none");
        const run = await runLive({
          adapter,
          scenario: "hello",
          caseName: "excluded-shell",
          record: false,
          tools: { allowed: null, excluded: [excluded] },
        });
        expect(run.exit.code, run.stderr.join("\n")).toBe(0);
        const offered = run.requests.flatMap((request) => request.tools ?? []);
        expect(offered.length, "the model was offered tools").toBeGreaterThan(0);
        if (how === "removed") expect(offered).not.toContain(shell);
        else
          expect(run.outcome.findings?.map((finding) => finding.title).join("\n")).toMatch(/denied|refused/i);
        expect(existsSync(join(run.workspace, "hello.txt"))).toBe(false);
      },
      180_000,
    );
  }
});
