import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseToml } from "smol-toml";
import { describe, expect, it } from "vitest";
import { parseAwaitRequest } from "../../src/engine/follow/await-tasks.js";
import { answerWindow, DEFAULT_ANSWER_WAIT_MS } from "../../src/mcp/ask-orchestrator.js";
import { INSTALLERS, parseJsonConfig } from "../../src/mcp/install-clients.js";
import type { Task } from "../../src/protocol/task.js";
import { dropProviderCredentials, isProviderCredential } from "../../src/support/provider-credentials.js";
import { tempDir } from "../helpers/repo.js";

describe("provider credentials", () => {
  it("drops every provider's keys and anything named like a secret, keeps the rest, and returns names only", () => {
    const env: NodeJS.ProcessEnv = {
      PATH: "/usr/bin",
      HOME: "/home/me",
      LANG: "C.UTF-8",
      CAESAR_CHANNEL_TASK_DIR: "/x/.caesar/tasks/t_1",
      ANTHROPIC_API_KEY: "a",
      ANTHROPIC_BASE_URL: "b",
      CLAUDE_CODE_OAUTH_TOKEN: "c",
      OPENAI_API_KEY: "d",
      AZURE_OPENAI_API_KEY: "e",
      GEMINI_API_KEY: "f",
      GOOGLE_APPLICATION_CREDENTIALS: "g",
      COPILOT_PROVIDER_API_KEY: "h",
      GH_TOKEN: "i",
      OPENCODE_CONFIG_CONTENT: "{}",
      OPENROUTER_API_KEY: "j",
      AWS_SECRET_ACCESS_KEY: "k",
      SOME_SERVICE_TOKEN: "l",
      my_password: "m",
    };
    const dropped = dropProviderCredentials(env);
    expect(Object.keys(env).sort()).toEqual(["CAESAR_CHANNEL_TASK_DIR", "HOME", "LANG", "PATH"]);
    expect(dropped).toHaveLength(14);
    expect(dropped).toContain("ANTHROPIC_BASE_URL");
    expect(isProviderCredential("NODE_OPTIONS")).toBe(false);
  });
});

describe("the answer window of ask_orchestrator", () => {
  const task = (deadlineMs: number | null, createdAt: string): Task =>
    ({ id: "t_1", created_at: createdAt, deadline_ms: deadlineMs }) as Task;

  it("is the default when the deadline is further away, and what is left of it otherwise", async () => {
    const dir = tempDir();
    const now = Date.parse("2026-01-01T00:00:00.000Z");
    const created = new Date(now).toISOString();
    expect(await answerWindow(dir, task(3_600_000, created), DEFAULT_ANSWER_WAIT_MS, now)).toMatchObject({
      waitMs: DEFAULT_ANSWER_WAIT_MS,
      limitedBy: "default",
    });
    // 40 s are left: a quarter of the task's minute (15 s) stays the agent's, to act without an answer.
    expect(
      await answerWindow(dir, task(60_000, created), DEFAULT_ANSWER_WAIT_MS, now + 20_000),
    ).toMatchObject({
      waitMs: 25_000,
      limitedBy: "deadline",
      marginMs: 15_000,
    });
    // `--timeout 8s`: the question comes back 2 s before the agent would be stopped, not as it is.
    expect(await answerWindow(dir, task(8_000, created), DEFAULT_ANSWER_WAIT_MS, now)).toMatchObject({
      waitMs: 6_000,
      marginMs: 2_000,
    });
    // The margin is at most a minute, however long the task.
    expect(
      await answerWindow(dir, task(3_600_000, created), DEFAULT_ANSWER_WAIT_MS, now + 3_500_000),
    ).toMatchObject({ waitMs: 40_000, limitedBy: "deadline", marginMs: 60_000 });
    expect(
      await answerWindow(dir, task(60_000, created), DEFAULT_ANSWER_WAIT_MS, now + 90_000),
    ).toMatchObject({
      waitMs: 0,
      limitedBy: "deadline",
    });
    expect((await answerWindow(dir, task(null, created), 1_000, now)).limitedBy).toBe("default");
  });

  it("prefers state.json's deadline_at, set when the agent started", async () => {
    const dir = tempDir();
    const now = Date.parse("2026-01-01T00:00:00.000Z");
    writeFileSync(
      join(dir, "state.json"),
      JSON.stringify({
        version: 1,
        id: "t_1",
        phase: "running",
        created_at: new Date(now).toISOString(),
        updated_at: new Date(now).toISOString(),
        agent: "a",
        objective: "o",
        mode: "write",
        isolation: "inplace",
        root: dir,
        workspace: dir,
        deadline_at: new Date(now + 10_000).toISOString(),
      }),
    );
    // created_at + deadline_ms would leave 20 s; the agent started later and has 10 s, minus its 5 s.
    const window = await answerWindow(
      dir,
      task(20_000, new Date(now).toISOString()),
      DEFAULT_ANSWER_WAIT_MS,
      now,
    );
    expect(window).toMatchObject({ waitMs: 5_000, limitedBy: "deadline", marginMs: 5_000 });
  });
});

describe("await arguments", () => {
  it("defaults timeout_ms to 30000, takes more than the cap (awaitTasks clamps it), refuses malformed ids", () => {
    expect(parseAwaitRequest({ task_ids: ["t_1"] })).toEqual({ task_ids: ["t_1"], timeout_ms: 30_000 });
    expect(parseAwaitRequest({ task_ids: ["t_1"], timeout_ms: 120_000 }).timeout_ms).toBe(120_000);
    expect(parseAwaitRequest({ task_ids: ["t_1"], timeout_ms: 120_001 }).timeout_ms).toBe(120_001);
    expect(() => parseAwaitRequest({ task_ids: ["t_1"], timeout_ms: -1 })).toThrow(/Invalid arguments/);
    expect(() => parseAwaitRequest({})).toThrow();
    expect(() => parseAwaitRequest({ task_ids: ["a/b"] })).toThrow();
    expect(() => parseAwaitRequest({ task_ids: [".."] })).toThrow();
    const refusal = (() => {
      try {
        parseAwaitRequest({ task_ids: ["t_1", "t_2", "t_1"] });
        return undefined;
      } catch (error) {
        return error as { code: string; detail: string };
      }
    })();
    expect(refusal?.code).toBe("invalid_await");
    expect(refusal?.detail).toContain('$.task_ids[2]: Duplicate task_id "t_1"');
  });
});

describe("client configuration edits", () => {
  const entry = { command: "/usr/bin/node", args: ['/opt/ca"esar/bin/caesar.js', "mcp", "serve"] };

  it("codex: appends a table, keeping every byte of the user's file", () => {
    const before = '# mine\nmodel = "x"\n[mcp_servers.other]\n# keep\ncommand = "o"';
    const method = INSTALLERS.codex.method("caesar", entry, before, "config.toml");
    if (method.kind !== "file") throw new Error("codex edits its file");
    expect(method.content.startsWith(`${before}\n`)).toBe(true);
    const parsed = parseToml(method.content) as {
      mcp_servers: Record<string, { command: string; args: string[] }>;
    };
    expect(parsed.mcp_servers.caesar).toEqual(entry);
    expect(parsed.mcp_servers.other).toEqual({ command: "o" });
  });

  it("copilot: a minimal JSON edit keeps comments and fields it does not know", () => {
    const before =
      '{\n  // mine\n  "mcpServers": { "other": { "command": "o", "x-note": 1 } },\n  "extra": true\n}\n';
    const method = INSTALLERS.copilot.method("caesar", entry, before, "mcp-config.json");
    if (method.kind !== "file") throw new Error("copilot edits its file");
    expect(method.content).toContain("// mine");
    const parsed = parseJsonConfig(method.content, "f") as {
      mcpServers: Record<string, unknown>;
      extra: boolean;
    };
    expect(parsed.extra).toBe(true);
    expect(parsed.mcpServers.other).toEqual({ command: "o", "x-note": 1 });
    expect(parsed.mcpServers.caesar).toEqual({ type: "local", ...entry, tools: ["*"] });
  });

  it("reads entries in each client's shape, opencode's command array included", async () => {
    const dir = tempDir();
    mkdirSync(join(dir, "oc"), { recursive: true });
    const file = join(dir, "oc", "opencode.jsonc");
    writeFileSync(
      file,
      '{ /* c */ "mcp": { "caesar": { "type": "local", "command": ["node", "a.js", "mcp", "serve"] } } }',
    );
    expect(await INSTALLERS.opencode.readEntry(file, "caesar")).toEqual({
      command: "node",
      args: ["a.js", "mcp", "serve"],
    });
    expect(await INSTALLERS.opencode.readEntry(file, "other")).toBeUndefined();
    expect(await INSTALLERS.claude.readEntry(join(dir, "absent.json"), "caesar")).toBeUndefined();
    expect(() => parseJsonConfig("[1]", "f")).toThrow(/not a JSON object/);
  });
});
