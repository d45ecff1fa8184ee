import { rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { agentStateFor } from "../helpers/agent-state.js";
import { liveCliEnv } from "../helpers/caesar-run-live.js";
import { parseJsonOutput, runCaesar } from "../helpers/cli.js";
import { agentBinAvailable } from "../helpers/live-agent.js";
import { tempDir } from "../helpers/repo.js";
import { pinnedAgentCli, standInForMissing } from "../helpers/system-deps.js";

/** Six tasks, one of them waiting out a 30 s deadline while the CLI waits for its (silent) model. */
const KIT_TIMEOUT_MS = 300_000;

// `caesar conformance <cli>`: the real CLI (pinned in test/agent-clis) against caesar mock-model's scripts.
describe("caesar conformance on a built-in CLI", () => {
  if (!agentBinAvailable("codex")) {
    standInForMissing(pinnedAgentCli("codex"));
    return;
  }
  it(
    "codex passes extended; unknown-field is not checked, and says why",
    async () => {
      const dir = tempDir("caesar-conformance-live-");
      try {
        // The kit keeps the CLI's home under XDG_CACHE_HOME: outside the temp directory, as codex needs.
        const env = { ...liveCliEnv(join(dir, "home")), XDG_CACHE_HOME: agentStateFor(dir) };
        const result = await runCaesar(["conformance", "codex", "--level", "extended", "--json"], {
          cwd: dir,
          env,
          timeoutMs: KIT_TIMEOUT_MS,
        });
        const card = parseJsonOutput<{
          passed: boolean;
          kind: string;
          requirements: { id: string; verdict: string; note?: string }[];
        }>(result);
        expect(result.code, JSON.stringify(card.requirements, null, 2)).toBe(0);
        expect(card).toMatchObject({ passed: true, kind: "cli" });
        const skipped = card.requirements.filter((r) => r.verdict === "skip");
        expect(skipped.map((r) => r.id)).toEqual(["unknown-field"]);
        expect(skipped[0]!.note).toMatch(/never reads task\.json/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    KIT_TIMEOUT_MS,
  );
});
