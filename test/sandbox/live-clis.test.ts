import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { MOCK_API_KEY } from "../../src/mock-model/agent-env.js";
import { git } from "../helpers/repo.js";
import {
  describeSandboxed,
  loopbackListener,
  outsideAddress,
  runSandboxedCli,
  tryConnect,
  writtenByCli,
} from "./live-clis-helper.js";

// The five agent CLIs under caesar's OS sandbox (`[sandbox] mode = "required"`), each against
// `caesar mock-model`: a write task succeeds (the CLI keeps its state in a home of the task's), a read-only
// task's write is refused by the kernel, and a task with network "off" reaches only its model (egress proxy).

const LIVE_TIMEOUT_MS = 320_000;

/** Each CLI's per-task home, under the task's runtime folder (src/agents/sandbox-home.ts). */
const HOMES: Record<string, string> = {
  codex: "codex-home",
  claude: "claude-config",
  gemini: "gemini-home/.gemini",
  opencode: "opencode-home/data/opencode",
  copilot: "copilot-home",
};

/** The variable of each CLI's key that caesar masks (its mock-model setup gives it one). */
const MASKED_KEYS: Record<string, string> = {
  claude: "ANTHROPIC_API_KEY",
  gemini: "GEMINI_API_KEY",
  copilot: "COPILOT_PROVIDER_API_KEY",
};

const COMMIT_HELLO =
  "echo OK > hello.txt && git add hello.txt && git -c user.email=a@example.com -c user.name=agent commit -qm hello";

for (const cli of Object.keys(HOMES)) {
  describeSandboxed(cli, cli, (cleanup) => {
    it(
      "a write task writes and commits in its worktree; the CLI's own state goes to a home of the task's",
      async () => {
        const run = await runSandboxedCli(cli, COMMIT_HELLO, ["--mode", "write"]);
        cleanup(run.root);
        expect(run.outcome, run.output.slice(-3000)).toBe("succeeded");
        expect(readFileSync(join(run.worktree, "hello.txt"), "utf8")).toBe("OK\n");
        // Its commit, adopted into the project's store (workspace/task-objects.ts).
        expect(git(run.worktree, "log", "-1", "--format=%s")).toBe("hello");
        // Sessions, logs, databases: written in the task's home, which the sandbox binds writable.
        expect(writtenByCli(join(run.dir, "runtime", HOMES[cli]!))).not.toEqual([]);
      },
      LIVE_TIMEOUT_MS,
    );

    it(
      "a read-only task's write is refused by the kernel, whatever the CLI's own policy lets through",
      async () => {
        const run = await runSandboxedCli(cli, "echo pwned > ro.txt; echo pwned >> README.md", [
          "--mode",
          "read-only",
        ]);
        cleanup(run.root);
        // The CLI started, ran the command and reported: the sandbox did not merely keep it from starting.
        expect(run.outcome, run.output.slice(-3000)).toBe("succeeded");
        const workspace = run.worktree || run.root;
        expect(existsSync(join(workspace, "ro.txt"))).toBe(false);
        expect(readFileSync(join(workspace, "README.md"), "utf8")).toBe("# sandboxed\n");
        expect(readFileSync(join(run.root, "README.md"), "utf8")).toBe("# sandboxed\n");
        // The command ran, and the kernel said no (EROFS), not the CLI.
        // codex's stream hides a command its sandbox saw fail (it takes it for a denied escalation): what
        // the model was sent says it.
        expect(`${run.output}${run.sent}`, run.sent.slice(-4000)).toMatch(/Read-only file system/);
      },
      LIVE_TIMEOUT_MS,
    );

    it(
      "network off: the CLI reaches its model through caesar's egress proxy, and nothing else — not a listener on the host's loopback",
      async () => {
        const listener = await loopbackListener();
        try {
          const run = await runSandboxedCli(cli, tryConnect(listener.port), [
            "--mode",
            "write",
            "--network",
            "off",
          ]);
          cleanup(run.root);
          expect(run.outcome, run.output.slice(-3000)).toBe("succeeded");
          expect(run.requests).toBeGreaterThan(0);
          expect(listener.connections()).toBe(0);
          // What the command printed, as the CLI's stream or the model was told it (the command's own text
          // names both words: the listener's count says which ran).
          expect(`${run.output}${run.sent}`).toContain("NET-CLOSED");
        } finally {
          await listener.close();
        }
      },
      LIVE_TIMEOUT_MS,
    );

    it(
      "a model reached as a provider is — an address outside the loopback — goes through caesar's proxy (HTTP(S)_PROXY)",
      async (context) => {
        const address = outsideAddress();
        if (!address) {
          context.skip("this machine has no IPv4 address outside its loopback to serve the model on");
          return;
        }
        const run = await runSandboxedCli(
          cli,
          "echo PROXIED",
          ["--mode", "write", "--network", "off"],
          address,
        );
        cleanup(run.root);
        expect(run.outcome, run.output.slice(-3000)).toBe("succeeded");
        expect(run.requests).toBeGreaterThan(0);
      },
      LIVE_TIMEOUT_MS,
    );

    // A key the CLI sends in a header to a base URL of a variable (agents/key-masks.ts): claude's, gemini's,
    // copilot's own provider's. codex and opencode read their provider's URL from a file: not masked.
    const masked = MASKED_KEYS[cli];
    it.runIf(masked !== undefined)(
      "its provider key is masked: its commands see a placeholder, the model gets the key through caesar",
      async () => {
        // Every process of the sandbox — the CLI itself too (copilot keeps its key from its commands, not
        // from /proc) — holds the placeholder: `ps e` lists each one's environment (copilot asks before a
        // command reads a path outside its workspace, such as /proc).
        const run = await runSandboxedCli(
          cli,
          `ps eww ax | tr ' ' '\\n' | grep '^${masked}=' | sort -u; echo LISTED`,
          ["--mode", "write"],
        );
        cleanup(run.root);
        expect(run.outcome, run.output.slice(-3000)).toBe("succeeded");
        const seen = `${run.output}${run.sent}`;
        expect(seen).toContain("LISTED");
        expect(seen).toMatch(new RegExp(`${masked}=caesar-masked-[0-9a-f]{40}`));
        expect(seen).not.toContain(MOCK_API_KEY);
        // Every request reached the model with the CLI's real key, none with the placeholder.
        expect(run.keys.length).toBeGreaterThan(0);
        expect(
          run.keys.filter((key) => key !== "mock"),
          run.keys.join(","),
        ).toEqual([]);
      },
      LIVE_TIMEOUT_MS,
    );

    // opencode may talk to any provider its configuration names: it keeps every provider's variables.
    it.runIf(cli !== "opencode")(
      "gets its own provider's credentials, not another provider's",
      async () => {
        const foreign = cli === "codex" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
        // Another CLI's sign-in file in the user's home, too.
        const file = cli === "codex" ? ".claude/.credentials.json" : ".codex/auth.json";
        const run = await runSandboxedCli(
          cli,
          // No command substitution: gemini's shell tool refuses it.
          `echo "FOREIGN=\${${foreign}:-none} OTHER=\${UNRELATED_SETTING:-none}"; cat "$HOME/${file}" 2>&1; echo CAT-DONE`,
          ["--mode", "write"],
          undefined,
          { [foreign]: "sk-foreign-secret", UNRELATED_SETTING: "kept" },
          { [file]: "sk-foreign-file-secret" },
        );
        cleanup(run.root);
        expect(run.outcome, run.output.slice(-3000)).toBe("succeeded");
        // The CLI itself reached its model with its own key; the command saw no other provider's.
        expect(`${run.output}${run.sent}`).toContain("FOREIGN=none OTHER=kept");
        expect(`${run.output}${run.sent}`).toContain("CAT-DONE");
        expect(`${run.output}${run.sent}`).not.toContain("sk-foreign-secret");
        expect(`${run.output}${run.sent}`).not.toContain("sk-foreign-file-secret");
      },
      LIVE_TIMEOUT_MS,
    );
  });
}
